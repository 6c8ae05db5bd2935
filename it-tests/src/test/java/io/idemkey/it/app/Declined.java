package io.idemkey.it.app;

/** A declined charge: a business outcome, recorded by the idempotent methods that list it. */
public class Declined extends Exception {
    public Declined(String message) {
        super(message);
    }
}
