package io.mesh.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fixture registered with {@code @RegisterExtension}: on a static field it is started once for the class, on an
 * instance field once per test; either way it is closed after. Subclasses say how to start and close.
 */
public abstract class ScopedFixture implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback,
        AutoCloseable {
    private boolean perClass;

    /**
     * Starts the fixture; a no-op when it runs (the callbacks call it; fixtures that compose this one too).
     *
     * @throws Exception whatever starting throws
     */
    public abstract void start() throws Exception;

    /** Before each test of a fixture started for the whole class (a reset); nothing by default. */
    protected void beforeEachOfClass() throws Exception {}

    /**
     * Before each test, whatever the scope, once the fixture runs (and after {@link #beforeEachOfClass}): opening what
     * one test uses; nothing by default.
     */
    protected void beforeEachTest() throws Exception {}

    /** After each test, whatever the scope (closing what one test opened); nothing by default. */
    protected void afterEachTest() {}

    @Override
    public final void beforeAll(ExtensionContext context) throws Exception {
        perClass = true;
        start();
    }

    @Override
    public final void beforeEach(ExtensionContext context) throws Exception {
        if (!perClass) start();
        else beforeEachOfClass();
        beforeEachTest();
    }

    @Override
    public final void afterEach(ExtensionContext context) throws Exception {
        afterEachTest();
        if (!perClass) close();
    }

    @Override
    public final void afterAll(ExtensionContext context) throws Exception {
        close();
    }
}
