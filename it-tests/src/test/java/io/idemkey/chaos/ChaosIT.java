package io.idemkey.chaos;

import io.idemkey.it.ServerProcess;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short chaos runs of the suite, over HTTP (Redis, PostgreSQL) and over messages (each store): both servers sharing
 * the store, the store restarted, one server killed and restarted. docs/reliability.md's chaos commands run the
 * long ones.
 */
@Execution(ExecutionMode.CONCURRENT) // on Open Liberty, beside the classes on the adapter's server
@ResourceLock(ServerProcess.SERVERS_OF_THEIR_OWN) // one at a time (it-tests/pom.xml)
class ChaosIT {

    /**
     * Over HTTP, on Redis and on PostgreSQL. MariaDB runs the JDBC store's same code with its own
     * statements: its chaos is the message run below (the stricter one, exactly once with the record
     * in the payment's transaction), and {@code -Dchaos.store=mariadb} runs this one long; each run
     * is about 75 s of the critical lane of the suite (docs/contributing.md).
     */
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

    /** The message mode: the payment consumers on both servers, every payment applied exactly once. */
    @ParameterizedTest(name = "messages, store={0}")
    @ValueSource(strings = {"redis", "jdbc", "mariadb"})
    void underChaosEveryPaymentIsAppliedExactlyOnce(String store) throws Exception {
        MessageChaosRun.Report report = MessageChaosRun.run(new MessageChaosRun.Options(
                Integer.getInteger("chaos.messages", 400), 5, 500, store));
        System.out.println(report.table());
        assertEquals(0, report.lost(), "payments never applied");
        assertEquals(0, report.deadLettered(), "messages dead-lettered");
        assertEquals(report.doubledAtTheKill(), report.doubled(), "payments applied twice, other than in the documented window");
        if (!"redis".equals(store)) {
            assertEquals(0, report.doubled(), "with the JDBC store, not even in the window");
        }
        assertTrue(report.passed());
    }
}
