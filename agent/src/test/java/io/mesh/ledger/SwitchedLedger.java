package io.mesh.ledger;

import io.mesh.wire.LedgerEntry;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A ledger that is the real writer while on and {@link Ledger#NONE} while off (benches): one applier, with its own
 * memory of its reports, measured with and without a ledger by turning it on and off between applies. Off, it says
 * {@link #enabled()} false, as {@link Ledger#NONE} does, so a module section takes the very path it takes without one.
 */
public final class SwitchedLedger extends Ledger {
    private final Ledger real;
    private volatile boolean on;

    /** @param real the writer lines go to while on */
    public SwitchedLedger(Ledger real) {
        super(real.dir().getParent(), ROTATE_BYTES, ROTATE_AGE, 1); // its own writer thread is never started
        this.real = real;
    }

    /** @param on whether lines go to the real writer from now on */
    public void on(boolean on) { this.on = on; }

    @Override
    public boolean enabled() { return on; }

    @Override
    public void write(LedgerEntry e) {
        if (on) real.write(e);
    }

    /** The real writer's own wait: its writer hurries for a line written ahead only when its own count says so. */
    @Override
    public boolean writeAhead(LedgerEntry e) {
        return !on || real.writeAhead(e);
    }

    @Override
    public Path dir() { return real.dir(); }

    @Override
    public boolean flush(Duration max) { return real.flush(max); }

    @Override
    public void close() { real.close(); }
}
