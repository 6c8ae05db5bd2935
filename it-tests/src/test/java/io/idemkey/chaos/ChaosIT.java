package io.idemkey.chaos;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short chaos run of the suite: both servers, one Redis restarted twice, one server killed and
 * restarted. README's chaos command runs the long one.
 */
class ChaosIT {

    @Test
    void underChaosEveryAnsweredKeyRunsOnceAndEveryReplayIsByteIdentical() throws Exception {
        ChaosRun.Report report = ChaosRun.run(new ChaosRun.Options(Integer.getInteger("chaos.keys", 800), 5, 200, 48));
        System.out.println(report.table());
        assertEquals(0, report.unexplainedDuplicates(), "keys run twice");
        assertEquals(0, report.keysWithoutAnswer(), "keys never answered");
        assertEquals(0, report.differingAnswers(), "keys answered with different bodies");
        assertEquals(report.replays(), report.identicalReplays(), "replays byte-identical");
        assertEquals(0, report.keysWithoutTtl(), "Redis keys without TTL");
        assertEquals(0, report.unexpected5xx(), "unexpected 5xx");
        assertTrue(report.replays() > 0 && report.answers().containsKey("409"), "the run had replays and conflicts: " + report.answers());
        assertTrue(report.passed());
    }
}
