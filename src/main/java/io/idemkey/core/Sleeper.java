package io.idemkey.core;

import java.time.Duration;

/** Pauses the calling thread; tests substitute one that advances a manual clock instead. */
@FunctionalInterface
public interface Sleeper {

    Sleeper THREAD = duration -> Thread.sleep(Math.max(1, duration.toMillis()));

    void sleep(Duration duration) throws InterruptedException;
}
