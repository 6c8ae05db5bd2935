package io.idemkey.chaos;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short chaos runs of the suite, one per store: both servers sharing it, the store restarted
 * twice, one server killed and restarted. README's chaos command runs the long one.
 */
class ChaosIT {

    @ParameterizedTest(name = "store={0}")
    @ValueSource(strings = {"redis", "jdbc"})
    void underChaosEveryAnsweredKeyRunsOnceAndEveryReplayIsByteIdentical(String store) throws Exception {
        ChaosRun.Report report = ChaosRun.run(new ChaosRun.Options(Integer.getInteger("chaos.keys", 800), 5, 200, 48, store));
        System.out.println(report.table());
        assertEquals(0, report.unexplainedDuplicates(), "keys run twice");
        assertEquals(0, report.keysWithoutAnswer(), "keys never answered");
        assertEquals(0, report.differingAnswers(), "keys answered with different bodies");
        assertEquals(report.replays(), report.identicalReplays(), "replays byte-identical");
        assertEquals(0, report.keysWithoutTtl(), "records without an expiry");
        assertEquals(0, report.unexpected5xx(), "unexpected 5xx");
        assertTrue(report.replays() > 0 && report.answers().containsKey("409"), "the run had replays and conflicts: " + report.answers());
        assertTrue(report.passed());
    }
}
