package io.idemkey.testing;

import io.idemkey.spi.Renewal;

/** Renewal outcomes as tests compare them. */
public final class Renewals {

    private Renewals() {
    }

    /** For each renewal, whether it extended the lease. */
    public static boolean[] extended(Renewal[] renewals) {
        boolean[] extended = new boolean[renewals.length];
        for (int i = 0; i < renewals.length; i++) {
            extended[i] = renewals[i] == Renewal.RENEWED;
        }
        return extended;
    }
}
