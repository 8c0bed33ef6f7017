// mesh coordinator page: refreshes <main> from /ui/fragment every few seconds. No framework.
(function () {
  'use strict';
  var main = document.getElementById('fleet');
  var status = document.getElementById('status');
  var every = (parseInt(main.getAttribute('data-refresh-seconds'), 10) || 3) * 1000;
  function refresh() {
    fetch('/ui/fragment', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
      .then(function (html) {
        // The last 24 hours scrolls sideways on a phone: keep where the reader scrolled it across the refresh.
        var tl = main.querySelector('.timeline');
        var scrolled = tl ? tl.scrollLeft : null;
        main.innerHTML = html;
        tl = main.querySelector('.timeline');
        if (tl && scrolled !== null) { tl.scrollLeft = scrolled; }
        main.setAttribute('data-refreshes', String((parseInt(main.getAttribute('data-refreshes'), 10) || 0) + 1));
        status.textContent = 'live, every ' + every / 1000 + 's';
        status.className = 'live';
      })
      .catch(function (e) {
        status.textContent = 'STALE: coordinator unreachable (' + e.message + '), retrying';
        status.className = 'stale';
      })
      .then(function () { setTimeout(refresh, every); });
  }
  setTimeout(refresh, every);
})();
