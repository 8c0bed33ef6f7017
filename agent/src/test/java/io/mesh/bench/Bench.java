package io.mesh.bench;

import io.mesh.wire.ZkPaths;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Small helpers shared by the *Bench mains: arguments, percentiles, result files. No assertions: benches print. */
public final class Bench {
    private Bench() {}

    /** @return {@code --key value} pairs */
    public static Map<String, String> args(String[] a) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < a.length; i += 2) m.put(a[i].replaceFirst("^--", ""), a[i + 1]);
        return m;
    }

    /** Nearest-rank percentile, p in [0,100]. */
    public static double pct(List<Double> xs, double p) {
        if (xs.isEmpty()) return Double.NaN;
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        int rank = (int) Math.ceil(p / 100.0 * s.size());
        return s.get(Math.max(0, Math.min(s.size() - 1, rank - 1)));
    }

    public static double median(List<Double> xs) { return pct(xs, 50); }

    public static String f(double v) {
        if (Double.isNaN(v)) return "n/a";
        if (Math.abs(v) >= 100) return String.format(Locale.ROOT, "%.0f", v);
        if (Math.abs(v) >= 10) return String.format(Locale.ROOT, "%.1f", v);
        return String.format(Locale.ROOT, "%.2f", v);
    }

    public static void log(String bench, String msg) {
        System.err.println("[" + bench + "] " + msg);
        System.err.flush();
    }

    /** Appends {@code key=value} lines to a results file (read by {@link BenchReport}). */
    public static void result(Path file, Map<String, ?> values) {
        StringBuilder sb = new StringBuilder();
        values.forEach((k, v) -> sb.append(k).append('=').append(v instanceof Double d ? f(d) : String.valueOf(v)).append('\n'));
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, sb.toString(), StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.out.print(sb);
        System.out.flush();
    }

    /**
     * Makes a store read desired nodes as the running agent's does: from a started {@code CuratorCache} of
     * {@code /mesh/desired}, once it has loaded ({@link io.mesh.zk.MeshStore#readDesiredFrom}).
     *
     * @return the cache, loaded; the caller closes it
     * @throws IllegalStateException when it does not load within 30 s
     */
    public static org.apache.curator.framework.recipes.cache.CuratorCache desiredCache(
            org.apache.curator.framework.CuratorFramework client, ZkPaths paths, io.mesh.zk.MeshStore store)
            throws InterruptedException {
        var cache = org.apache.curator.framework.recipes.cache.CuratorCache.build(client, paths.desired());
        var loaded = new java.util.concurrent.CountDownLatch(1);
        cache.listenable().addListener(org.apache.curator.framework.recipes.cache.CuratorCacheListener.builder()
                .forInitialized(() -> {
                    store.readDesiredFrom(cache);
                    loaded.countDown();
                }).build());
        cache.start();
        if (!loaded.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
            cache.close();
            throw new IllegalStateException("the desired cache did not load");
        }
        return cache;
    }

    public static double ms(long nanos) { return nanos / 1e6; }
}
