/*
 * Idemkey's record protocol, as the code runs it: a Promela model for spin (docs/reliability.md, "The protocol, model-checked").
 *
 * One key, NS servers, NC clients that send the same request (same key, same fingerprint) and
 * retry it. The store keeps one record; its operations are the Lua script's (record.lua) or the
 * JDBC store's SQL statements, each one atomic step, named after them (lua_*, sql_*). A clock
 * advances in ticks and expires leases; a server may pause between any two of its steps for as
 * long as the clock likes (it simply does not move), crash at any of them (MAXCRASH in all), and a
 * store call may fail (MAXFAULT in all): either it did not run, or it ran and its reply was lost.
 *
 * Configurations (-D at `spin -a`; model/verify runs them):
 *   (default)        the Redis store: record.lua
 *   JDBC             the JDBC store, the record completed in the method's transaction
 *                    (completeInTransaction, JOINED): exactly-once effects
 *   JDBC NOT_JOINED  the JDBC store, the record completed after the commit (a connection not
 *                    enlisted in the transaction, or not READ COMMITTED): at-most-once execution,
 *                    as Redis
 *   STRICT_ONCE      also asserts "the effect happens at most once" where the code does not
 *                    promise it (Redis, NOT_JOINED): the check must find the window
 *   NO_FENCING_CHECK drops the fencing assertions, to see a seeded bug's consequence further on
 * Seeded bugs, each must make the check fail with a trail:
 *   BUG_COMPLETE_NO_OWNER  complete does not compare the owner token
 *   BUG_RENEW_NO_OWNER     renew does not compare the owner token
 *   BUG_ACQUIRE_GET_SET    acquire is a GET, then a SET in a later round trip
 *   BUG_LEASE_NEVER_EXPIRES  an in-progress record never expires (a SET without PX): liveness
 *
 * Operators' operations (record.lua's inspect, listed and purge, the JDBC store's StoreInspection; issue 29)
 * are not modelled as operations of their own: inspect and listed only read; purge deletes the record, which
 * the model already has as expiry: an unforced purge (refused while in progress) is a completed
 * record's TTL ending early (a retry then runs again: the operator's documented choice), a forced
 * purge of a record in progress is its lease expiring early (the owner's complete and renew then
 * answer "lease lost", as after an expiry; its release answers "free").
 *
 * The code this models, by revision (ProtocolModelTest fails when one of them changes and this
 * list does not: review the matching operation below, then record the new revision here):
 *   revision record.lua sha256:ad6a0fcfa82310cc
 *   revision PostgresDialect.acquire sha256:0281089ffeae34c5
 *   revision PostgresDialect.completing sha256:4e2d8d3f3bc1a91f
 *   revision PostgresDialect.completeInTransaction sha256:9b6dde8de5a07c2f
 *   revision PostgresDialect.release sha256:e17ad7f9e40b26db
 *   revision PostgresDialect.renew sha256:609833e6be6955b7
 *   revision PostgresDialect.deleteExpired sha256:83abc5fbb032a684
 *   revision PostgresDialect.acquireCounting sha256:a2416abadd8bbd70
 *   revision PostgresDialect.lastCommitted sha256:ef664b50a0e2f548
 *   revision PostgresDialect.expire sha256:cf9efb7d33d4bae0
 *   revision MariaDbDialect.acquire sha256:c22630911dda130b
 *   revision MariaDbDialect.lastCommitted sha256:b75d6aaede409044
 *   revision MariaDbDialect.completing sha256:53901970f3d00010
 *   revision MariaDbDialect.completedByOwner sha256:7fce89ff3328ae28
 *   revision MariaDbDialect.release sha256:76c362567f99b0c1
 *   revision MariaDbDialect.free sha256:76c048a72cba9bfb
 *   revision MariaDbDialect.renew sha256:488b92c70b4cfa28
 *   revision MariaDbDialect.heldLease sha256:a4ce1b88deaba28a
 *   revision MariaDbDialect.deleteExpired sha256:2b3ae94331187f69
 *   revision MariaDbDialect.acquireCounting sha256:afd119bbd8200419
 *   revision MariaDbDialect.expire sha256:1efd205404dcb02b
 *
 * The sql_* operations are both databases' statements (JDBC). MariaDB reaches the same steps in
 * its own way: acquire is one INSERT ... ON DUPLICATE KEY UPDATE that takes over only an expired
 * or its own row, and a row another transaction holds fails it at once (lock wait timeout 0) and is
 * read as last committed (lastCommitted): the "held" branch of sql_acquire; a held lease is renewed
 * by nobody and read the same way (heldLease): sql_renew's held branch; the completion is joined to
 * the transaction by @@in_transaction instead of a transaction id; release's answer, when its DELETE
 * found no row of its own, comes from a second statement (free) that may see a later state: that
 * answer is only counted and logged, and the state changes only in the DELETE, which is sql_release.
 *
 * With a per-key rate limit the JDBC store acquires with acquireCounting instead of acquire (both
 * databases): the same take-over rule as sql_acquire (an expired row, or its own in-progress row
 * when the acquire is sent again), guarded in addition by the row's request count, so within the
 * limit it is sql_acquire, and beyond it it takes nothing over (the "not takeable" branch: only the
 * count changes, which no property here reads). A row a transaction holds fails it at once (NOWAIT
 * on PostgreSQL, lock wait timeout 0 on MariaDB): run again twice (another request's statement holds
 * it for a moment), then read as last committed (lastCommitted, refused if its count reached the
 * limit, which changes nothing): the "held" branch. Its release (expire) sets the row's expiry in the past instead of deleting it
 * (under the same owner, in-progress guard): every operation here treats an expired row as absent,
 * so it is sql_release; the cleanup (deleteExpired) also waits for the count's window to end.
 *
 * The Redis store sends an acquire without a rate limit as two plain commands in one write instead
 * of record.lua's acquire (issue 30: about half of the script's cost to Redis): SET key <in-progress
 * record> NX PX <lock TTL> GET, then PTTL key. The SET is lua_acquire in one atomic step: it creates
 * the record where the key is free (expired records are absent to both), and otherwise changes
 * nothing and returns the record, from which the store answers as the script does (mismatch first,
 * then in progress or the completed response; PTTL only informs Retry-After and the replay cache).
 * One branch differs: lua_acquire's "the same token again" sets the lease whole again (left = LOCK)
 * in the same step; the store does it in a second step, a renewal (lua_renew, compare-and-set on the
 * token), and acquires anew if that renewal finds the lease lost. The first step then changed
 * nothing, so the pair is lua_acquire's branch taken at the renewal's moment, or, when the lease was
 * lost in between, no step at all before the next acquire: both sequences the model already runs.
 *
 * Where Redis has SET ... IFEQ (Valkey from 8.1, Redis from 8.4), the Redis store completes with
 * SET key <completed record> IFEQ <its own record in progress> PX <TTL> first instead of
 * record.lua's complete (issue 30: the script's cost to Redis). It writes exactly where the key
 * holds this owner's record in progress (the record names the owner token, and a token is acquired
 * with one fingerprint), which is lua_complete's completing branch, in one atomic step, with the
 * same completed record and TTL; anywhere else it writes and changes nothing, and the store then
 * runs lua_complete itself, whose answer (completed by this token before, or the lease lost) is the
 * answer. So the pair is lua_complete's completing branch, or no step followed by lua_complete:
 * both sequences the model already runs. A Redis without IFEQ refuses the command as a syntax error
 * before it looks at the key: no step. A WAIT follows whichever step wrote on its connection: the
 * SET ... IFEQ, or the script's rewrite of a record this owner completed before.
 *
 * The Redis store's coalescing path (idempotency.redis.coalesce, CoalescedCalls) changes how calls
 * travel, not what runs, so the Redis configurations above hold for it unchanged:
 *   - each call in a batch is still its own command (a script call, an acquire's SET and PTTL,
 *     which are written together, or a completion's SET ... IFEQ), run by Redis alone and atomically
 *     (one lua_* step here), in the pipeline's order; a pipeline is not a transaction (no MULTI), so
 *     no call's effect or reply depends on another's. Calls of different servers that travel
 *     together run in some order, and the model already tries every order of the servers' steps;
 *     one server's calls are never in one batch together (each of its steps waits for the last);
 *   - a batch that gets no answer (a broken connection, a timeout) gives each call it carried a
 *     fate the model already has: the calls Redis ran before the connection broke are
 *     CALL_REPLY_LOST, the others CALL_DOWN. Each caller then does what it did before with its own
 *     call: after a broken connection it sends it once more with the same owner token (the "same
 *     token again" branches of lua_acquire and lua_complete, the compare-and-set of release and
 *     renew), after a timeout it reports the store unavailable. A call that was queued behind a
 *     batch that timed out fails unsent: CALL_DOWN. One batch's failure is thus several servers'
 *     calls failing at once: several faults, which the model covers when MAXFAULT allows as many
 *     (model/verify -DLOCK=1 -DMAXCRASH=0 -DMAXFAULT=2: two servers' calls failed in one run);
 *   - fencing is record.lua's compare-and-set on the owner token, unchanged, or SET ... IFEQ's on
 *     the owner's whole record in progress (above), which holds the token; a completion that
 *     waits for replicas (WAIT) is not coalesced: it keeps a connection of its own, so what its
 *     WAIT covers (every write on that connection before it) is what it covered before;
 *   - a batch that waits for company (idempotency.redis.coalesce-linger-us, at most 10 ms, only
 *     once calls arrive together) sends its calls later, nothing else: a delay between a server's
 *     decision to call and Redis running the call, which the model already has (any step of one
 *     server may come after any steps of the others), as a slow network would be; leases are
 *     counted by Redis from when it runs the call, so a renewal sent late is a renewal that
 *     arrives late, as the model's lease expiry already allows.
 *
 * Left out on purpose (each is one branch of the code that cannot change the properties here):
 * fingerprint mismatch (422: answered before any state changes), the rate limit (on Redis a separate
 * counter key, counted after lua_acquire's "the same token again" branch, so a retried acquire
 * that finds its own record acquires again with or without it; on JDBC the count above), the replay cache (holds only
 * completed records, which never change), completed records' TTL (longer than any run here: they
 * never expire in the model), fail-open endpoints (they run unprotected by definition).
 */

#ifndef NS
#define NS 2          /* servers */
#endif
#ifndef NC
#define NC 2          /* clients, each retrying the same request */
#endif
#ifndef LOCK
#define LOCK 2        /* the lock TTL, in clock ticks */
#endif
#ifndef MAXTRY
#define MAXTRY 2      /* attempts of client 0 (it retries after a timeout, a 409 or a 503) */
#endif
#ifndef OTHER_TRIES
#define OTHER_TRIES 1 /* attempts of every other client */
#endif
#define TRIES(c) (c == 0 -> MAXTRY : OTHER_TRIES)
#ifndef MAXCRASH
#define MAXCRASH 1    /* server crashes in a run */
#endif
#ifndef MAXFAULT
#define MAXFAULT 1    /* failed store calls in a run */
#endif

#define NT (NS + 2)   /* owner tokens 1..NT: at most NS + 1 are referenced at once, so one is always fresh */
#define NONE 255

/* the record */
#define FREE 0        /* no record (Redis: absent; JDBC: no row) */
#define PROG 1        /* in progress: 'P' / completed = FALSE */
#define DONE 2        /* completed: 'C' / completed = TRUE */

/* acquire's answers */
#define A_ACQUIRED 1
#define A_IN_PROGRESS 2
#define A_COMPLETED 3
#define A_UNAVAILABLE 4

/* a store call's fate */
#define CALL_OK 0
#define CALL_REPLY_LOST 1   /* it ran, the reply never came (a timeout): the caller sees a failure */
#define CALL_DOWN 2         /* it did not run */

/* completeInTransaction's outcome */
#define TX_JOINED 1   /* the record is written in the transaction */
#define TX_LOST 2     /* the lease is lost: the transaction rolls back */
#define TX_DOWN 3     /* the store failed: the transaction rolls back */

/* what a client receives */
#define R_LIVE 1        /* the response of the execution it started */
#define R_REPLAY 2      /* a completed record's response */
#define R_CONFLICT 3    /* 409 in progress */
#define R_TAKEN_OVER 4  /* 409 key-taken-over: the lease was lost, the transaction rolled back */
#define R_UNAVAILABLE 5 /* 503, or a 5xx of the method: the key was released */
#define R_NO_ANSWER 6   /* the connection dropped: the server crashed */

/* an owner token's execution, for the window's accounting */
#define T_FREE 0      /* token unused */
#define T_RUNNING 1   /* acquired: its method runs (the effect may still happen) */
#define T_EFFECT 2    /* the effect happened, the record is not completed */
#define T_ENDED 3     /* completed, released, or died before its effect */

/* the store's state */
byte st = FREE;
byte owner;              /* owner token (a completed record keeps it: 8 bytes of it in record.lua) */
byte left;               /* ticks until an in-progress record expires */
byte resp;               /* the completed record's response (the id of the execution that made it) */
byte lockedBy = NONE;    /* JDBC: the server whose open transaction holds the row lock */

/* ghosts: what the properties talk about, never read by the protocol */
byte holder;             /* the token whose acquire made the current in-progress record */
byte lease[NS];          /* each server's belief: ticks left on the lease it holds (0: none) */
byte tok[NS];            /* each server's current owner token (0: none) */
byte tstate[NT + 1];
byte effects;            /* business effects that happened (JDBC: committed) */
byte windows;            /* leases lost by an owner whose effect happened or may still happen */
byte executions;
byte recorded;           /* the first completed response */
byte answered[NC];       /* the response a client accepted (0: none yet) */
byte crashes, faults;
bool crash[NS];

chan req[NS] = [NC * MAXTRY] of { byte, byte };     /* client, attempt */
chan rep[NC] = [1] of { byte, byte };               /* answer, response */
byte attempt[NC];        /* the attempt each client waits for (0: none) */

/* Fencing, as the store sees it: it accepts a change only from the current record's owner. */
inline accepted(t) {
#ifndef NO_FENCING_CHECK
  assert(t == holder)
#else
  skip
#endif
}

/* A server now believes it holds the key: no other server may believe so at the same instant. */
inline believes(s) {
  lease[s] = LOCK;
#ifndef NO_FENCING_CHECK
  for (i : 0 .. NS - 1) {
    assert(i == s || lease[i] == 0)
  }
  i = 0
#endif
}

/* A completed record is never overwritten or deleted (its TTL outlives the model). */
inline writable() {
  assert(st != DONE)
}

/* The current in-progress record expired while its owner's effect happened or may still happen:
 * the window in which a retry runs the method again. */
inline lost_by_owner() {
  if
  :: tstate[owner] == T_RUNNING || tstate[owner] == T_EFFECT -> windows++;
     printf("MSC: lease of token %d lost by its owner (window %d)\n", owner, windows)
  :: else
  fi
}

/* The record no longer refers to its owner token: a token that no server holds is free again. */
inline unown() {
  i = 0;
  do
  :: i < NS && tok[i] != owner -> i++
  :: i < NS && tok[i] == owner -> break
  :: i == NS -> tstate[owner] = T_FREE; break
  od;
  i = 0;
  owner = 0
}

inline record_done(t, x) {
  printf("MSC: token %d completes the record with response %d\n", t, x);
  writable();
  accepted(t);
  st = DONE; owner = t; resp = x; left = 0; holder = 0;
  if
  :: recorded == 0 -> recorded = x
  :: else
  fi
}

/* ---------------------------------------------------------------- record.lua, one call each --- */

inline lua_acquire(t, res) {
  if
  :: st == FREE -> st = PROG; owner = t; left = LOCK; holder = t; res = A_ACQUIRED
  :: st == PROG && owner == t -> left = LOCK; res = A_ACQUIRED  /* the same token again: a retried call */
  :: st == PROG && owner != t -> res = A_IN_PROGRESS
  :: st == DONE -> res = A_COMPLETED
  fi
}

inline lua_complete(t, x, ok) {
  if
  :: st == FREE -> ok = false
  :: st == DONE -> ok = (owner == t)     /* completed by this token before: a retried call (record.lua writes the record again unchanged, for WAIT) */
#ifdef BUG_COMPLETE_NO_OWNER
  :: st == PROG -> record_done(t, x); ok = true
#else
  :: st == PROG && owner != t -> ok = false
  :: st == PROG && owner == t -> record_done(t, x); ok = true
#endif
  fi
}

inline lua_release(t, ok) {
  if
  :: st == FREE -> ok = true
  :: st == PROG && owner == t -> accepted(t); st = FREE; unown(); holder = 0; ok = true
  :: else -> ok = false
  fi
}

inline lua_renew(t, ok) {
  if
#ifdef BUG_RENEW_NO_OWNER
  :: st == PROG -> printf("MSC: token %d renews\n", t); accepted(t); left = LOCK; ok = true
#else
  :: st == PROG && owner == t -> printf("MSC: token %d renews\n", t); accepted(t); left = LOCK; ok = true
#endif
  :: else -> ok = false
  fi
}

/* Redis expires an in-progress record by itself: the key is gone. */
inline lua_expire() {
  st = FREE; unown(); holder = 0
}

/* ------------------------------------------------- JdbcIdempotencyStore, one statement each --- */
/* "left == 0" is expires_at <= now(): the row stays until taken over or deleted. A row locked by
 * an open transaction is skipped (SKIP LOCKED) or waited for, as each statement says. */

inline sql_acquire(t, res) {
  if
  :: st == FREE -> st = PROG; owner = t; left = LOCK; holder = t; res = A_ACQUIRED        /* inserted */
  :: st == PROG && (left == 0 || owner == t) && lockedBy == NONE ->                       /* taken */
     if
     :: owner != t -> unown()
     :: else
     fi;
     st = PROG; owner = t; left = LOCK; holder = t; res = A_ACQUIRED
  :: st == PROG && (left == 0 || owner == t) && lockedBy != NONE -> res = A_IN_PROGRESS  /* no row: held */
  :: st == PROG && left > 0 && owner != t -> res = A_IN_PROGRESS
  :: st == DONE -> res = A_COMPLETED
  fi
}

/* completing: WHERE owner_token = ? AND (completed OR expires_at > statement_timestamp()) */
#ifdef BUG_COMPLETE_NO_OWNER
#define COMPLETING(t) (st == DONE || (st == PROG && left > 0))
#else
#define COMPLETING(t) (owner == t && (st == DONE || (st == PROG && left > 0)))
#endif

inline sql_complete(t, x, ok) {
  if
  :: COMPLETING(t) ->
     if
     :: st == PROG -> record_done(t, x)
     :: else       /* CASE WHEN completed THEN response: unchanged */
     fi;
     ok = true
  :: else -> ok = false
  fi
}

/* The UPDATE (after waiting for another transaction's row lock) locks the row until the commit
 * or rollback; what it writes becomes visible at the commit. */
inline sql_complete_in_transaction(s, t, ok) {
  assert(lockedBy == NONE);   /* the caller waited for it */
  if
  :: COMPLETING(t) -> printf("MSC: token %d completes the record in its transaction\n", t); accepted(t); lockedBy = s; ok = true
  :: else -> ok = false
  fi
}

inline sql_release(t, ok) {
  assert(lockedBy == NONE);   /* the caller waited for it */
  if
  :: st == PROG && owner == t -> accepted(t); st = FREE; unown(); holder = 0; ok = true
  :: else -> ok = (st == FREE || (st == PROG && left == 0))
  fi
}

inline sql_renew(t, ok) {
  if
#ifdef BUG_RENEW_NO_OWNER
  :: st == PROG && left > 0 && lockedBy == NONE -> printf("MSC: token %d renews\n", t); accepted(t); left = LOCK; ok = true
#else
  :: st == PROG && owner == t && left > 0 && lockedBy == NONE -> printf("MSC: token %d renews\n", t); accepted(t); left = LOCK; ok = true
#endif
  /* ours and alive in the statement's snapshot, but locked (SKIP LOCKED): "unknown", never lost */
  :: st == PROG && owner == t && left > 0 && lockedBy != NONE -> held = true
  :: else -> ok = false
  fi
}

inline sql_delete_expired() {
  st == PROG && left == 0 && lockedBy == NONE;
  st = FREE; unown(); holder = 0
}

#ifdef JDBC
#define store_acquire(t, res)     sql_acquire(t, res)
#define store_complete(t, x, ok)  sql_complete(t, x, ok)
#define store_release(t, ok)      sql_release(t, ok)
#define store_renew(t, ok)        sql_renew(t, ok)
#else
#define store_acquire(t, res)     lua_acquire(t, res)
#define store_complete(t, x, ok)  lua_complete(t, x, ok)
#define store_release(t, ok)      lua_release(t, ok)
#define store_renew(t, ok)        lua_renew(t, ok)
#endif

/* ------------------------------------------------------------------------------ the actors --- */

/* A store call's fate, chosen by the model: it ran and answered, or a fault. */
inline call_fate(fate) {
  if
  :: fate = CALL_OK
  :: faults < MAXFAULT -> faults++; fate = CALL_REPLY_LOST
  :: faults < MAXFAULT -> faults++; fate = CALL_DOWN
  fi
}

/* A token no record, server or execution refers to: unique among the owners a key ever has. */
inline fresh_token(t) {
  t = 1;
  do
  :: t == owner -> t++
  :: else ->
     ok = false;
     for (i : 0 .. NS - 1) {
       if
       :: tok[i] == t -> ok = true
       :: else
       fi
     }
     if
     :: ok -> t++
     :: else -> break
     fi
  od;
  assert(t <= NT);
  tstate[t] = T_RUNNING;
  i = 0; ok = false
}

/* The method's lease is renewed in the background while it runs: any number of times, or none
 * (a pause), until the store refuses (the lease is lost: the method runs on regardless). */
inline renewals(s, t) {
  do
  :: atomic {
       !lost -> call_fate(fate);
       d_step {
         if
         :: fate != CALL_DOWN -> store_renew(t, ok);
            if
            :: ok && fate == CALL_OK -> believes(s)
            :: !ok && !held && fate == CALL_OK -> lost = true; lease[s] = 0
            :: else
            fi
         :: else
         fi;
         ok = false; held = false; fate = 0
       }
     }
  :: break
  od
}

inline reply(c, answer, x, a) {
  if
  :: attempt[c] == a -> rep[c] ! answer, x
  :: else   /* the client gave up on this attempt: its connection is closed */
  fi;
  waiting = false
}

/* A finished request leaves nothing behind in its server's variables. */
inline forget() {
  if
  :: t != 0 && !(st != FREE && owner == t) -> tstate[t] = T_FREE
  :: else
  fi;
  tok[s] = 0; lease[s] = 0;
  c = 0; a = 0; t = 0; x = 0; res = 0; fate = 0; ok = false; lost = false; waiting = false
}

/* Acquire, and the answer unless the method runs: 503, 409, or the replay. */
inline acquire_step() {
  if
  :: fate != CALL_DOWN ->
#ifdef BUG_ACQUIRE_GET_SET
     res = st   /* GET: what it saw; the SET comes in the next round trip */
#else
     store_acquire(t, res)
#endif
  :: else
  fi;
#ifndef BUG_ACQUIRE_GET_SET
  answer_acquire()
#endif
}

inline answer_acquire() {
  if
  :: fate != CALL_OK ->     /* 503; a record acquired unseen expires after its lock TTL */
     tstate[t] = T_ENDED; reply(c, R_UNAVAILABLE, 0, a); forget()
  :: fate == CALL_OK && res == A_IN_PROGRESS ->
     tstate[t] = T_ENDED; reply(c, R_CONFLICT, 0, a); forget()
  :: fate == CALL_OK && res == A_COMPLETED ->
     tstate[t] = T_ENDED; assert(resp == recorded); reply(c, R_REPLAY, resp, a); forget()
  :: fate == CALL_OK && res == A_ACQUIRED ->
     believes(s);   /* the lease counts from the call, as the engine counts it */
     executions++; x = executions;
     printf("MSC: server %d acquired with token %d, execution %d\n", s, t, x)
  fi
}

#ifdef BUG_ACQUIRE_GET_SET
inline set_step() {
  if
  :: fate != CALL_DOWN && res == FREE ->
     st = PROG; owner = t; left = LOCK; holder = t; res = A_ACQUIRED  /* SET, unconditional */
  :: fate != CALL_DOWN && res == PROG -> res = A_IN_PROGRESS
  :: fate != CALL_DOWN && res == DONE -> res = A_COMPLETED
  :: else
  fi;
  answer_acquire()
}
#endif

proctype Server(byte s) {
  byte c, a, t, x, res, fate, i;
  bool ok, lost, waiting, held;
end:
  do
  :: {
end_idle:
       do
       :: atomic { req[s] ? c, a -> d_step { waiting = true; fresh_token(t); tok[s] = t } };
          atomic { call_fate(fate); d_step { acquire_step() } };
#ifdef BUG_ACQUIRE_GET_SET
          d_step { set_step() };
#endif
          if
          :: res != A_ACQUIRED   /* answered */
          :: res == A_ACQUIRED ->
             renewals(s, t);
             if
             :: atomic {   /* the method fails before its effect (a 5xx): the key is released */
                  call_fate(fate);
#ifdef JDBC
                  lockedBy == NONE || fate == CALL_DOWN;   /* the DELETE waits for a row lock */
#endif
                  d_step {
                    printf("MSC: server %d: execution %d fails before its effect, releases\n", s, x);
                    tstate[t] = T_ENDED;
                    if
                    :: fate != CALL_DOWN -> store_release(t, ok)
                    :: else
                    fi;
                    reply(c, R_UNAVAILABLE, 0, a); forget()
                  }
                }
#if defined(JDBC) && !defined(NOT_JOINED)
             :: true ->    /* @Transactional: the effect and the record commit together, or neither */
                atomic {
                  if
                  :: lost -> res = TX_LOST   /* the execution knows: the transaction rolls back */
                  :: else -> call_fate(fate)
                  fi;
                  lockedBy == NONE || res == TX_LOST || fate != CALL_OK;   /* the UPDATE waits for a row lock */
                  d_step {
                    if
                    :: res == TX_LOST
                    :: else ->
                       if
                       :: fate == CALL_OK -> sql_complete_in_transaction(s, t, ok);
                          res = (ok -> TX_JOINED : TX_LOST)
                       :: else -> res = TX_DOWN   /* the transaction cannot commit its record */
                       fi
                    fi;
                    lease[s] = 0     /* no more renewals */
                  }
                };
                if
                :: res == TX_JOINED ->
                   d_step {       /* the commit */
                     assert(lockedBy == s);
                     if
                     :: st == PROG -> record_done(t, x)
                     :: else
                     fi;
                     lockedBy = NONE; effects++; tstate[t] = T_ENDED;
                     printf("MSC: server %d committed execution %d's effect and record\n", s, x);
                     reply(c, R_LIVE, x, a); forget()
                   }
                :: res != TX_JOINED ->
                   atomic {       /* rolled back: the effect is gone; the key is released */
                     call_fate(fate);
                     lockedBy == NONE || fate == CALL_DOWN;   /* the DELETE waits for a row lock */
                     d_step {
                       tstate[t] = T_ENDED;
                       printf("MSC: server %d rolled back execution %d\n", s, x);
                       if
                       :: fate != CALL_DOWN -> sql_release(t, ok)
                       :: else
                       fi;
                       reply(c, (res == TX_LOST -> R_TAKEN_OVER : R_UNAVAILABLE), 0, a); forget()
                     }
                   }
                fi
#else
             :: d_step {   /* the effect, then the record: one round trip apart */
                  effects++; tstate[t] = T_EFFECT;
                  printf("MSC: server %d ran execution %d's effect (%d in all)\n", s, x, effects)
                };
#ifdef STRICT_ONCE
                assert(effects <= 1);
#endif
                atomic {   /* the method returned: no more renewals; complete, unless known lost */
                  if
                  :: lost -> fate = CALL_OK
                  :: else -> call_fate(fate)
                  fi;
                  d_step {
                    if
                    :: !lost && fate != CALL_DOWN -> store_complete(t, x, ok)
                    :: else
                    fi;
                    if
                    :: fate == CALL_OK -> tstate[t] = T_ENDED
                    :: else
                    fi;
                    reply(c, R_LIVE, x, a)   /* delivered whether or not it was recorded */
                  }
                };
                /* a failed completion is retried in the background while the lease lasts */
                do
                :: d_step { tstate[t] != T_EFFECT -> forget() }; break
                :: atomic {
                     tstate[t] == T_EFFECT && lease[s] > 0 -> call_fate(fate);
                     d_step {
                       if
                       :: fate != CALL_DOWN -> store_complete(t, x, ok)
                       :: else
                       fi;
                       if
                       :: fate == CALL_OK -> tstate[t] = T_ENDED
                       :: else
                       fi
                     }
                   }
                :: d_step { tstate[t] == T_EFFECT && lease[s] == 0 -> tstate[t] = T_ENDED }   /* abandoned */
                od
#endif
             fi
          fi
       od
     } unless {
       d_step {
         crash[s] ->
         printf("MSC: server %d crashed\n", s);
         crash[s] = false;
         if
         :: lockedBy == s -> lockedBy = NONE   /* its open transaction rolls back */
         :: else
         fi;
         if
         :: tok[s] != 0 && tstate[t] == T_RUNNING -> tstate[t] = T_ENDED   /* died before its effect */
         :: else
         fi;
         if
         :: waiting -> reply(c, R_NO_ANSWER, 0, a)
         :: else
         fi;
         forget()
       }
     }
  od
}

proctype Client(byte c) {
  byte tries, answer, x, i;
  do
  :: tries < TRIES(c) ->
     tries++;
     attempt[c] = tries;
     req[(c + tries - 1) % NS] ! c, tries;   /* the load balancer sends a retry to the next server */
     if
     :: rep[c] ? answer, x
     :: atomic {   /* a read timeout: it gives up on this attempt (an answer just arriving is dropped) */
          attempt[c] = 0;
          if
          :: nempty(rep[c]) -> rep[c] ? answer, x
          :: empty(rep[c])
          fi;
          answer = R_NO_ANSWER; x = 0
        }
     fi;
     if
     :: answer == R_LIVE || answer == R_REPLAY ->
        atomic {
          answered[c] = x;
          if
          :: answer == R_REPLAY -> printf("MSC: client %d gets response %d, replayed\n", c, x); assert(x == recorded)
          :: else -> printf("MSC: client %d gets response %d\n", c, x)
          fi;
          /* clients agree, but where the window let a second execution run */
          for (i : 0 .. NC - 1) {
            assert(answered[i] == 0 || answered[i] == x || windows > 0)
          }
          i = 0
        };
        break
     :: else -> answer = 0; x = 0
     fi
  :: else -> break
  od;
  attempt[c] = 0
}

active proctype Clock() {
  byte i;
end:
  do
  :: atomic {
       (st == PROG && left > 0) || lease[0] > 0 || (NS > 1 && lease[1] > 0) || (NS > 2 && lease[2] > 0) ->
       if
#ifdef BUG_LEASE_NEVER_EXPIRES
       :: false ->
#else
       :: st == PROG && left > 0 -> left--;
#endif
          if
          :: left == 0 ->   /* the lease ran out: its owner can no longer complete or renew */
             lost_by_owner();
#ifndef JDBC
             lua_expire()
#else
             skip          /* the row stays, counted as absent, until taken over or deleted */
#endif
          :: else
          fi
       :: else
       fi;
       for (i : 0 .. NS - 1) {
         if
         :: lease[i] > 0 -> lease[i]--
         :: else
         fi
       }
       i = 0
     }
  od
}

active proctype Crasher() {
  byte s;
  do
  :: crashes < MAXCRASH ->
     atomic {
       crashes++;
       s = 0;
       do
       :: s < NS - 1 -> s++
       :: break
       od;
       crash[s] = true
     }
  :: else -> break
  od
}

#ifdef JDBC
active proctype Cleanup() {   /* ExpiredRowsCleanup, on any server */
  byte i;
end:
  do
  :: atomic { sql_delete_expired() }
  od
}
#endif

init {
  byte i;
  atomic {
    for (i : 0 .. NS - 1) {
      run Server(i)
    }
    for (i : 0 .. NC - 1) {
      run Client(i)
    }
  }
}

/* Effects: at most once with the transactional JDBC store; elsewhere once per lost lease beyond
 * the first (the window, and nothing else). */
#if defined(JDBC) && !defined(NOT_JOINED)
#define ONCE (effects <= 1)
#else
#define ONCE (effects <= 1 + windows)
#endif

/* An in-progress record whose owner is gone and whose lease still blocks the key. */
#define ORPHAN (st == PROG && left > 0 && tstate[owner] == T_ENDED)

ltl effects_once { [] ONCE }
ltl orphan_freed { [] (ORPHAN -> <> !ORPHAN) }
