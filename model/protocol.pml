/*
 * Oncestream's exactly-once protocol (docs/protocol.md), as one worker runs it, checked
 * exhaustively by Spin (model/check.sh).
 *
 * Modelled: two Kafka partitions of three records each, with keys that collide within a
 * partition and across the two, one partition with equal record timestamps (its write
 * timestamps come from the chain alone) and one with increasing ones; batches of one or two
 * records per partition (the planner's choice stands for whatever Kafka's latest offset and
 * the batch cap give); the write-ahead entry offsets/N and the commit entry commits/N, each
 * appended once to its log and durable only once fdatasync'd (an older build's create-only
 * files, durable once their directory is fsync'd, behave the same way); commits/N made durable
 * while batch N+1 runs (the worker waits for it before the next commit, before it waits for
 * records and before the group commit of N), with offsets/N+1 carrying it, so that recovery
 * restores a commit a power loss took back once the next entry is durable; writes sent
 * asynchronously and applied by Cassandra in any order, last write wins by timestamp (equal
 * timestamps: the greater value); crashes (up to MAXCRASH) at every step: inside an entry's
 * append, between writes, before and after the commit and the group commit. A crash is a
 * power loss in its worst case: writes in flight land or are lost, each on its own, and an
 * entry not yet made durable is there or gone (an incomplete one is read as gone: only the
 * entry being appended can be, since each is durable before the next is appended).
 *
 * Abstracted away, and why that is sound: record values are their ids (a row is one value
 * per key); filtering and mapping are functions of the record, so they change which rows
 * exist, not when; the read itself is exact ranges of immutable records (Kafka's promise);
 * purging old log entries only removes committed batches below the newest, which recovery
 * never reads; the lock admits one worker per checkpoint, so one worker process is modelled.
 *
 * Properties (assertions, checked in every state where they apply):
 *   table_exact        when every record is committed, each key holds the value and timestamp
 *                      of applying every record once in offset order per partition (the
 *                      expected table is computed at init, without crashes or batches);
 *   timestamps_stable  every write of a record carries the timestamp the chain gives it
 *                      without crashes (invariant I3);
 *   replay_exact       a batch id is always run with the ranges and bases it was first planned
 *                      with: recovery never skips an open batch nor plans it again (I4);
 *   group_behind_table a consumer-group offset never passes the end of the newest commit
 *                      that exists (I5), after every group commit and after every crash;
 *   recoverable        recovery never finds logs that do not belong together, nor a commit
 *                      missing below the newest (a hole: only a log's last entry can be lost).
 *
 * Mutations (each must yield a counterexample): MUTATION_COMMIT_BEFORE_ACK,
 * MUTATION_NO_FSYNC_OFFSETS, MUTATION_FRESH_TIMESTAMPS_ON_REPLAY, MUTATION_SKIP_OPEN_BATCH,
 * MUTATION_GROUP_BEFORE_COMMIT (the group offsets of N sent once commits/N is appended, before
 * it is durable), MUTATION_COMMIT_NOT_AWAITED (commits/N appended while commits/N-1 may not be
 * durable yet: two entries a power loss can take, the earlier alone), MUTATION_NO_COMMIT_IN_WAL
 * (offsets/N+1 without the commit of N: nothing to restore it from), and
 * MUTATION_NO_FSYNC_AT_START: a worker that does not sync
 * the checkpoint's logs when it opens them (the engine did not fsync its directories, until
 * this model showed a replay whose offsets entry a second power loss removes). The printf lines are the steps of a
 * trail (spin -t).
 */

#define P 2            /* partitions */
#define R 3            /* records per partition */
#define KEYS 2
#define B 6            /* batch ids 0..B-1: every batch reads at least one record */
#define CAP 2          /* records per partition per batch, at most */
#ifndef MAXCRASH
#define MAXCRASH 3
#endif

#define ABSENT 0
#define WRITTEN 1      /* appended (or linked), readable, not yet fdatasync'd (or directory fsync'd) */
#define DURABLE 2

/* Kafka: record r of partition p is rec[p*R + r] */
byte rkey[P*R];
byte rts[P*R];

/* Cassandra: per key, value (record id + 1, 0 = no row) and write timestamp */
byte tval[KEYS];
byte tts[KEYS];

/* the checkpoint volume */
byte off_state[B];
byte off_start[B*P];
byte off_end[B*P];
byte off_base[B*P];
byte com_state[B];
byte com_last[B*P];

/* the consumer group */
byte group[P];

/* writes in flight: pending[i] = record id + 1, with its timestamp */
byte pending[CAP*P];
byte pend_ts[CAP*P];

/* ghosts: what the checks compare with (not part of any real state) */
byte exp_ts[P*R];
byte exp_val[KEYS];
byte exp_tts[KEYS];
bool g_planned[B];
byte g_start[B*P];
byte g_end[B*P];
byte g_base[B*P];

byte crashes;

inline land(rec, ts) {
    /* last write wins; equal timestamps: the greater value */
    if
    :: ts > tts[rkey[rec]] || (ts == tts[rkey[rec]] && rec + 1 > tval[rkey[rec]]) ->
        tval[rkey[rec]] = rec + 1; tts[rkey[rec]] = ts
    :: else -> skip
    fi
}

inline newest_commit_end(p, e) {
    e = 0;
    j = 0;
    do
    :: j < B -> if :: com_state[j] != ABSENT -> e = g_end[j*P + p] :: else -> skip fi; j++
    :: else -> break
    od
}

inline check_group() {
    p = 0;
    do
    :: p < P -> newest_commit_end(p, e); assert(group[p] <= e); /* group_behind_table */ p++
    :: else -> break
    od
}

inline maybe_crash() {
    if
    :: crashes < MAXCRASH -> crashes++; goto crash
    :: true -> skip
    fi
}

/*
 * Settles the last commit (b-1, the batch before the one at hand): waits until it is durable
 * (its sync ran while the batch after it ran), then sends its group offsets (I5). Before each
 * commit, and when the worker waits or stops.
 */
inline settle() {
#ifdef MUTATION_COMMIT_NOT_AWAITED
    /* not waited for: its sync may have finished, or not yet */
    if
    :: b > 0 && com_state[b-1] == WRITTEN -> com_state[b-1] = DURABLE; printf("STEP commits/%d durable (fdatasync)\n", b - 1)
    :: true -> skip
    fi;
#else
    if
    :: b > 0 && com_state[b-1] == WRITTEN -> com_state[b-1] = DURABLE; printf("STEP commits/%d durable (fdatasync)\n", b - 1)
    :: else -> skip
    fi;
#endif
    if
    :: pend_group && com_state[b-1] == DURABLE ->
        p = 0;
        do
        :: p < P -> group[p] = off_end[(b-1)*P + p]; p++
        :: else -> break
        od;
        printf("STEP group offsets of batch %d committed\n", b - 1);
        check_group();
        pend_group = false
    :: else -> skip
    fi
}

proctype worker() {
    byte b, p, i, j, e, o, c, ts, rec, n;
    bool replay, any;
    bool pend_group;   /* the group offsets of batch b-1, committed in this run, not sent yet */
    byte chain[P];

start:
    /*
     * The worker opens the checkpoint: it syncs each log's last segment (and the directories),
     * so an entry that survived the crash is durable before recovery acts on it. Then recovery: the
     * newest offsets entry O and the newest commit C, from the files that exist.
     */
    o = 255; c = 255; j = 0;
    do
    :: j < B ->
#ifndef MUTATION_NO_FSYNC_AT_START
               if :: off_state[j] == WRITTEN -> off_state[j] = DURABLE :: else -> skip fi;
               if :: com_state[j] == WRITTEN -> com_state[j] = DURABLE :: else -> skip fi;
#endif
               if :: off_state[j] != ABSENT -> o = j :: else -> skip fi;
               if :: com_state[j] != ABSENT -> c = j :: else -> skip fi; j++
    :: else -> break
    od;
    /* a commit missing below the newest one is a hole in the log: damage, not a crash's tail */
    j = 0;
    do
    :: c != 255 && j < c -> assert(com_state[j] != ABSENT); /* recoverable */ j++
    :: else -> break
    od;
    pend_group = false;
    if
    :: o == 255 -> assert(c == 255); /* recoverable */ b = 0; replay = false
    :: o != 255 && ((c == 255 && o == 1) || (c != 255 && c + 2 == o)) ->
#ifdef MUTATION_NO_COMMIT_IN_WAL
        assert(false) /* recoverable: the commit offsets/o would carry is lost with nothing to restore it from */
#else
        /* offsets/o carries the commit of o-1, which a power loss took back: restored, durably */
        p = 0;
        do
        :: p < P -> com_last[(o-1)*P + p] = off_base[o*P + p]; p++
        :: else -> break
        od;
        com_state[o-1] = DURABLE;
        printf("STEP recover: commits/%d restored from offsets/%d\n", o - 1, o);
        b = o; replay = true
#endif
    :: o != 255 && c == o -> b = o + 1; replay = false;
        printf("STEP recover: batch %d is committed, next is batch %d\n", o, b)
#ifdef MUTATION_SKIP_OPEN_BATCH
    :: o != 255 && ((c == 255 && o == 0) || (c != 255 && c + 1 == o)) -> b = o + 1; replay = false;
        printf("STEP recover: open batch %d skipped, next is batch %d (MUTATION)\n", o, b)
#else
    :: o != 255 && ((c == 255 && o == 0) || (c != 255 && c + 1 == o)) -> b = o; replay = true
#endif
    :: else -> assert(false) /* recoverable: the logs do not belong together */
    fi;

next_batch:
    if
    :: replay ->
        printf("STEP recover: replay open batch %d with offsets/%d: [%d,%d) [%d,%d)\n", b, b,
            off_start[b*P], off_end[b*P], off_start[b*P+1], off_end[b*P+1]);
        p = 0;
        do
        :: p < P ->
#ifdef MUTATION_FRESH_TIMESTAMPS_ON_REPLAY
            chain[p] = 0; /* MUTATION: the replay computes timestamps afresh */
#else
            chain[p] = off_base[b*P + p];
#endif
            p++
        :: else -> break
        od
    :: else ->
        /* plan batch b from the ends and bases of batch b-1 (committed), or from 0 */
        any = false; p = 0;
        do
        :: p < P ->
            if
            :: b == 0 -> off_start[p] = 0; chain[p] = 0
            :: else -> off_start[b*P + p] = off_end[(b-1)*P + p]; chain[p] = com_last[(b-1)*P + p]
            fi;
            off_base[b*P + p] = chain[p];
            n = off_start[b*P + p];
            if
            :: n < R -> off_end[b*P + p] = n + 1; any = true
            :: n + 1 < R && CAP >= 2 -> off_end[b*P + p] = n + 2; any = true
            :: n == R -> off_end[b*P + p] = n
            fi;
            p++
        :: else -> break
        od;
        if
        :: !any ->
            /* nothing left: every record is committed; the worker settles before it waits */
            settle();
            printf("STEP done: batches 0..%d committed\n", b - 1);
            i = 0;
            do
            :: i < KEYS -> assert(tval[i] == exp_val[i] && tts[i] == exp_tts[i]); /* table_exact */ i++
            :: else -> break
            od;
            check_group();
            goto end
        :: else -> skip
        fi;
        printf("STEP plan batch %d: [%d,%d) [%d,%d)\n", b, off_start[b*P], off_end[b*P], off_start[b*P+1], off_end[b*P+1]);
        /* offsets/b: appended (a crash before the frame is whole leaves a tail read as absent, cut at the next append) */
        maybe_crash();
        off_state[b] = WRITTEN;
        printf("STEP offsets/%d appended\n", b);
        maybe_crash();
#ifndef MUTATION_NO_FSYNC_OFFSETS
        off_state[b] = DURABLE;
        printf("STEP offsets/%d durable (fdatasync)\n", b);
#endif
        maybe_crash()
    fi;

    /* replay_exact: batch b runs with the ranges and bases it was first planned with */
    if
    :: g_planned[b] ->
        p = 0;
        do
        :: p < P -> assert(g_start[b*P+p] == off_start[b*P+p] && g_end[b*P+p] == off_end[b*P+p] && g_base[b*P+p] == off_base[b*P+p]); /* replay_exact */ p++
        :: else -> break
        od
    :: else ->
        g_planned[b] = true; p = 0;
        do
        :: p < P -> g_start[b*P+p] = off_start[b*P+p]; g_end[b*P+p] = off_end[b*P+p]; g_base[b*P+p] = off_base[b*P+p]; p++
        :: else -> break
        od
    fi;

    /* read the ranges and send one write per record, with its chain timestamp */
    n = 0; p = 0;
    do
    :: p < P ->
        rec = p*R + off_start[b*P + p];
        do
        :: rec < p*R + off_end[b*P + p] ->
            if
            :: chain[p] + 1 > rts[rec] -> ts = chain[p] + 1
            :: else -> ts = rts[rec]
            fi;
            chain[p] = ts;
            assert(ts == exp_ts[rec]); /* timestamps_stable */
            pending[n] = rec + 1; pend_ts[n] = ts; n++;
            rec++
        :: else -> break
        od;
        p++
    :: else -> break
    od;
    printf("STEP batch %d read: %d writes sent\n", b, n);

#ifdef MUTATION_COMMIT_BEFORE_ACK
    printf("STEP batch %d: commit log before the acknowledgements (MUTATION)\n", b);
    goto commit;
acked:
#endif
    /* Cassandra acknowledges the writes one by one, in any order */
    do
    :: true ->
        any = false; i = 0;
        do
        :: i < CAP*P -> if :: pending[i] != 0 -> any = true :: else -> skip fi; i++
        :: else -> break
        od;
        if
        :: !any -> break
        :: else -> skip
        fi;
        i = 0;
        do
        :: i < CAP*P && pending[i] != 0 -> break
        :: i < CAP*P && pending[i] != 0 -> i++
        :: i < CAP*P && pending[i] == 0 -> i++
        :: i == CAP*P -> i = 0
        od;
        land(pending[i] - 1, pend_ts[i]);
        printf("STEP write of record %d (ts %d) acknowledged\n", pending[i] - 1, pend_ts[i]);
        pending[i] = 0;
        maybe_crash()
    od;
#ifdef MUTATION_COMMIT_BEFORE_ACK
    goto committed;
#endif

commit:
    /* commits/b: appended; its fdatasync runs while batch b+1 runs, whose offsets entry carries it */
    maybe_crash();
    settle();
    maybe_crash();
    p = 0;
    do
    :: p < P -> com_last[b*P + p] = chain[p]; p++
    :: else -> break
    od;
    com_state[b] = WRITTEN;
    printf("STEP commits/%d appended (made durable while the next batch runs)\n", b);
#ifdef MUTATION_COMMIT_BEFORE_ACK
    goto acked;
committed:
#endif
#ifdef MUTATION_GROUP_BEFORE_COMMIT
    p = 0;
    do
    :: p < P -> group[p] = off_end[b*P + p]; p++
    :: else -> break
    od;
    printf("STEP group offsets of batch %d committed, before its commit is durable\n", b);
    check_group();
#else
    pend_group = true;
#endif
    maybe_crash();
    b++;
    replay = false;
    goto next_batch;

crash:
    printf("STEP crash %d (power loss)\n", crashes);
    /* writes in flight: each lands or is lost */
    i = 0;
    do
    :: i < CAP*P ->
        if
        :: pending[i] != 0 -> land(pending[i] - 1, pend_ts[i]); printf("STEP   in-flight write of record %d landed\n", pending[i] - 1)
        :: pending[i] != 0 -> printf("STEP   in-flight write of record %d lost\n", pending[i] - 1)
        :: else -> skip
        fi;
        pending[i] = 0; i++
    :: else -> break
    od;
    /* entries not made durable: there or gone */
    j = 0;
    do
    :: j < B ->
        if
        :: off_state[j] == WRITTEN -> off_state[j] = ABSENT; printf("STEP   offsets/%d lost\n", j)
        :: off_state[j] == WRITTEN -> skip
        :: else -> skip
        fi;
        if
        :: com_state[j] == WRITTEN -> com_state[j] = ABSENT; printf("STEP   commits/%d lost\n", j)
        :: com_state[j] == WRITTEN -> skip
        :: else -> skip
        fi;
        j++
    :: else -> break
    od;
    check_group();
    goto start;

end:
    skip
}

init {
    byte p, r, rec, prev, k;
    /*
     * partition 0: equal record timestamps (its order comes from the chain alone); partition 1:
     * increasing; keys collide within and across, and partition 0's records decide final values,
     * so a wrong chain there shows in table_exact itself, not only in timestamps_stable.
     */
    rkey[0] = 1; rkey[1] = 0; rkey[2] = 0;
    rkey[3] = 1; rkey[4] = 0; rkey[5] = 1;
    rts[0] = 1; rts[1] = 1; rts[2] = 1;
    rts[3] = 1; rts[4] = 2; rts[5] = 3;
    /* the expected table: each record once, in offset order per partition, last write wins */
    p = 0;
    do
    :: p < P ->
        prev = 0; r = 0;
        do
        :: r < R ->
            rec = p*R + r;
            if
            :: prev + 1 > rts[rec] -> exp_ts[rec] = prev + 1
            :: else -> exp_ts[rec] = rts[rec]
            fi;
            prev = exp_ts[rec];
            k = rkey[rec];
            if
            :: exp_ts[rec] > exp_tts[k] || (exp_ts[rec] == exp_tts[k] && rec + 1 > exp_val[k]) ->
                exp_val[k] = rec + 1; exp_tts[k] = exp_ts[rec]
            :: else -> skip
            fi;
            r++
        :: else -> break
        od;
        p++
    :: else -> break
    od;
    run worker()
}
