/*
 * Oncestream's rescale (docs/protocol.md §11): the hand-off of each partition's chain (its next
 * offset and last write timestamp) from its owner in epoch e to its owner in epoch e+1, checked
 * exhaustively by Spin (model/check.sh). Self-contained; model/protocol.pml checks the batch
 * protocol of one worker, with the crashes inside it, in more detail.
 *
 * Modelled: three Kafka partitions of two records each, keys colliding within and across
 * partitions, equal record timestamps within partitions (the chain's +1 decides the order).
 * Epoch 0 has 2 workers, worker w owning the partitions p with p mod 2 = w ({0,2} and {1});
 * epoch 1 has M1 workers (-DM1=1 or -DM1=3), worker i owning p mod M1 = i; with -DM2=k a second
 * rescale to an epoch 2 of k workers. Each worker runs batches in its own checkpoint directory
 * (the volume's root in epoch 0, epoch-<e>/ after): plan from the newest commit, or in a new
 * epoch from the savepoint (start = offset, base = last timestamp); the offsets entry; one write
 * per record with its chain timestamp, acknowledged in any order, last write wins (equal
 * timestamps: the greater value); the commit (ends, last timestamps); the group offsets.
 * Recovery replays an open batch with its recorded ranges and bases. The barrier: the operator
 * requests it at any moment and repeats it, so a worker gets it at any later batch boundary, also
 * after a restart; the worker commits (replaying its open batch first), writes `sealed` (linked,
 * then durable by the directory fsync, only then reported) and parks; a worker that restarts on a
 * sealed checkpoint parks again (its fsync at open makes a linked seal durable). The operator
 * waits for every seal, creates the savepoint (one ConfigMap: whole or not at all), starts the
 * new epoch's workers one by one; each writes its copy of the savepoint, then its metadata,
 * refuses to start if its volume's older epoch is not sealed, and seeds its first batch from the
 * savepoint. A worker that committed nothing in its epoch seals where its partitions started:
 * from startingOffsets in epoch 0, the savepoint it was seeded from after (see
 * MUTATION_EMPTY_SEAL_FORGETS_SAVEPOINT).
 *
 * Crashes (up to MAXCRASH in all, of any worker or the operator, at every step): a worker after
 * its offsets entry, with its writes in flight, after its commit, after its group commit, after
 * its seal's link (a power loss: the seal is there or gone), after its seal's fsync, while parked,
 * after its copy of the savepoint and after its metadata; the operator after requesting the
 * barrier, before and after creating the savepoint, between starting workers (it restarts from
 * what Kubernetes holds: the savepoints and the pods it created). A write in flight at its
 * sender's crash lands then, is lost, or stays in flight: a zombie's late write, which lands (or
 * not) after the last epoch has written everything. Old and new workers interleave freely: the
 * model never kills an old worker (a deleted pod runs on through its grace period, and a
 * StatefulSet makes other ordinals' pods meanwhile), so parked old workers are alive, and may
 * restart, while new ones run.
 *
 * Abstracted away, and why that is sound: record values are their ids (a row is one value per
 * key); files other than `sealed` are durable once written (create-only names, fsync'd file and
 * directory: model/protocol.pml checks that pattern and power losses inside it), so a crash
 * before an entry's link is a crash after the step before it; a batch reads one or two records
 * (the planner's nondeterministic choice, which may leave an owned partition out, stands for
 * whatever Kafka's offsets and the cap give); Kafka holds every record from offset 0 and nothing
 * arrives later, so startingOffsets is `earliest` (offset 0, base 0; with -DAGED_OUT, Kafka's
 * retention may have removed records an earlier epoch committed); batch ids are not kept
 * (recovery needs only whether the newest offsets entry has a commit, the seal and savepoint only
 * chain points), nor the offsets entry of a committed batch (its ends are the commit's). Writes
 * that land later rather than sooner change nothing: last-write-wins is commutative and no
 * property reads the table before the end, so a late write landing at the end stands for it
 * landing at any moment after its sender crashed. Steps of different workers are interleaved at
 * batch granularity: within a batch a worker touches only its own directory and partitions (the
 * table's writes commute, the checks on reads are symmetric), and the barrier is read only at
 * batch boundaries.
 *
 * Properties (assertions, checked in every state where they apply):
 *   table_exact        when the last epoch's workers have read everything and the late writes
 *                      have landed or not, each key holds the value and timestamp of applying
 *                      every record once in offset order per partition (computed at init);
 *   timestamps_stable  every write of a record, in any epoch, first run or replay, carries the
 *                      timestamp of the uninterrupted chain (I3 across epochs, I10);
 *   single_owner       a record is read in one epoch only: no offset read by the owners of two
 *                      epochs (I6 across epochs, I9); and in an epoch each partition is read by
 *                      one worker (I10);
 *   group_behind_table a consumer-group offset never passes its partition's newest committed
 *                      end in any epoch (I5), after every group commit and every crash;
 *   older_epoch_sealed a new epoch's worker never finds its volume's older epoch unsealed (it
 *                      would refuse to start, and the job would be stuck);
 *   and no invalid end state: every run ends with the last epoch having read everything.
 * A write of a record carries its own timestamp, so a record read by two epochs is written
 * twice alike and the table cannot tell: single_owner is what sees a hand-off in the wrong place.
 *
 * Mutations (each must yield a counterexample):
 *   MUTATION_NEW_OWNER_RESTARTS_CHAIN      the new owner's first batch has base 0, not the
 *                                          savepoint's last timestamp;
 *   MUTATION_SAVEPOINT_BEFORE_SEAL         the operator takes each worker's state from its newest
 *                                          commit, without waiting for its seal;
 *   MUTATION_SEALED_WORKER_PLANS_AGAIN     a worker that restarts on a sealed checkpoint ignores
 *                                          the seal and plans again;
 *   MUTATION_SEAL_FROM_OFFSETS_NOT_COMMITS the seal's last timestamp is the base of the newest
 *                                          offsets entry (where the last batch's chain began),
 *                                          not the commit's last timestamp;
 *   MUTATION_REPORT_SEAL_BEFORE_FSYNC      the seal is reported once linked, before the directory
 *                                          fsync made it durable;
 *   MUTATION_EMPTY_SEAL_FORGETS_SAVEPOINT  (with -DM2) a worker of epoch >= 1 that committed
 *                                          nothing seals "committed nothing", and the next epoch
 *                                          starts its partitions from startingOffsets (what
 *                                          §11 step 3 says as written).
 * The printf lines are the steps of a trail (spin -t); W<e>.<i> is worker i of epoch e.
 */

#define P 3            /* partitions */
#define R 2            /* records per partition */
#define KEYS 2
#define CAP 2          /* records per batch, at most */
#define MAXW 3         /* workers per epoch, at most */
#ifndef M1
#define M1 3
#endif
#ifdef M2
#define NE 3
#else
#define NE 2
#endif
#ifndef MAXCRASH
#define MAXCRASH 2
#endif
#define NZ (CAP*MAXCRASH + 1) /* writes in flight whose sender crashed: room for them all */

#define ABSENT 0
#define LINKED 1
#define DURABLE 2

#define D(e, w)  ((e)*MAXW + (w))
#define EP(e, p) ((e)*P + (p))
#define OWNS(e, w, p) ((p) % par[e] == (w))

/* Kafka: record r of partition p is rec[p*R + r] */
byte rkey[P*R];
byte rts[P*R];

/* Cassandra: per key, value (record id + 1, 0 = no row) and write timestamp */
byte tval[KEYS];
byte tts[KEYS];

/* writes in flight whose sender crashed: record id + 1, timestamp */
byte zrec[NZ];
byte zts[NZ];

/* the job's shape per epoch */
byte par[NE];

/* checkpoint directories, one per (epoch, worker): D(e, w) */
bool d_exists[NE*MAXW];   /* the worker opened it */
byte d_files[NE*MAXW];    /* epoch >= 1: 1 = savepoint copy written, 2 = and metadata */
bool d_commit[NE*MAXW];   /* the commit log has an entry */
bool d_open[NE*MAXW];     /* the newest offsets entry has no commit: an open batch */
byte d_seal[NE*MAXW];     /* ABSENT, LINKED, DURABLE */
/* their contents per (epoch, partition): partitions have one owner per epoch */
byte o_start[NE*P];       /* newest offsets entry: range and base */
byte o_end[NE*P];
byte o_base[NE*P];
byte c_end[NE*P];         /* newest commit: end (next offset) and last timestamp */
byte c_last[NE*P];
byte s_off[NE*P];         /* sealed: next offset, last timestamp, or from startingOffsets */
byte s_ts[NE*P];
bool s_fresh[NE*P];

/* Kubernetes: savepoints (ConfigMaps) per epoch >= 1, barriers requested, pods created */
bool sp[NE];
byte sp_off[NE*P];
byte sp_ts[NE*P];
bool sp_fresh[NE*P];
bool bar[NE];             /* the barrier for epoch e+1, asked of epoch e's workers */
bool started[NE*MAXW];
bool finished[MAXW];      /* the last epoch's workers that have read everything */

/* the consumer group */
byte group[P];

byte crashes;

/* ghosts: what the checks compare with (not part of any real state) */
byte exp_ts[P*R];
byte exp_val[KEYS];
byte exp_tts[KEYS];
byte g_epoch[P*R];        /* epoch + 1 that read the record */
byte g_reader[NE*P];      /* worker + 1 that read the partition in the epoch */

inline land(rec, ts) {
    /* last write wins; equal timestamps: the greater value */
    if
    :: ts > tts[rkey[rec]] || (ts == tts[rkey[rec]] && rec + 1 > tval[rkey[rec]]) ->
        tval[rkey[rec]] = rec + 1; tts[rkey[rec]] = ts
    :: else -> skip
    fi
}

inline check_group() {
    /* group_behind_table: against the newest committed end of the partition in any epoch */
    k = 0;
    do
    :: k < P ->
        assert(group[k] <= c_end[EP(0, k)] || group[k] <= c_end[EP(1, k)] || group[k] <= c_end[EP(NE - 1, k)]); /* group_behind_table */
        k++
    :: else -> break
    od;
    k = 0
}

inline maybe_crash() {
    if
    :: crashes < MAXCRASH -> crashes++; crashed = true; goto restart
    :: true -> skip
    fi
}

/* the owned partitions q0 < q1 < q2 (255: none), for printing */
inline owned() {
    q0 = 255; q1 = 255; q2 = 255; k = 0;
    do
    :: k < P && OWNS(e, w, k) -> if :: q0 == 255 -> q0 = k :: q0 != 255 && q1 == 255 -> q1 = k :: else -> q2 = k fi; k++
    :: k < P && !OWNS(e, w, k) -> k++
    :: else -> break
    od;
    k = 0
}

inline print_ranges(replay) {
    owned();
    if
    :: replay && q1 == 255 -> printf("STEP W%d.%d replays its open batch: p%d [%d,%d) base %d\n", e, w, q0, ls[q0], le[q0], lb[q0])
    :: replay && q1 != 255 && q2 == 255 -> printf("STEP W%d.%d replays its open batch: p%d [%d,%d) base %d, p%d [%d,%d) base %d\n", e, w,
            q0, ls[q0], le[q0], lb[q0], q1, ls[q1], le[q1], lb[q1])
    :: replay && q2 != 255 -> printf("STEP W%d.%d replays its open batch: p%d [%d,%d) base %d, p%d [%d,%d) base %d, p%d [%d,%d) base %d\n", e, w,
            q0, ls[q0], le[q0], lb[q0], q1, ls[q1], le[q1], lb[q1], q2, ls[q2], le[q2], lb[q2])
    :: !replay && q1 == 255 -> printf("STEP W%d.%d plans a batch (offsets entry): p%d [%d,%d) base %d\n", e, w, q0, ls[q0], le[q0], lb[q0])
    :: !replay && q1 != 255 && q2 == 255 -> printf("STEP W%d.%d plans a batch (offsets entry): p%d [%d,%d) base %d, p%d [%d,%d) base %d\n", e, w,
            q0, ls[q0], le[q0], lb[q0], q1, ls[q1], le[q1], lb[q1])
    :: !replay && q2 != 255 -> printf("STEP W%d.%d plans a batch (offsets entry): p%d [%d,%d) base %d, p%d [%d,%d) base %d, p%d [%d,%d) base %d\n", e, w,
            q0, ls[q0], le[q0], lb[q0], q1, ls[q1], le[q1], lb[q1], q2, ls[q2], le[q2], lb[q2])
    fi;
    q0 = 0; q1 = 0; q2 = 0
}

inline print_commit() {
    owned();
    if
    :: q1 == 255 -> printf("STEP W%d.%d commits: p%d at %d, last ts %d\n", e, w, q0, c_end[EP(e, q0)], c_last[EP(e, q0)])
    :: q1 != 255 && q2 == 255 -> printf("STEP W%d.%d commits: p%d at %d, last ts %d; p%d at %d, last ts %d\n", e, w,
            q0, c_end[EP(e, q0)], c_last[EP(e, q0)], q1, c_end[EP(e, q1)], c_last[EP(e, q1)])
    :: q2 != 255 -> printf("STEP W%d.%d commits: p%d at %d, last ts %d; p%d at %d, last ts %d; p%d at %d, last ts %d\n", e, w,
            q0, c_end[EP(e, q0)], c_last[EP(e, q0)], q1, c_end[EP(e, q1)], c_last[EP(e, q1)], q2, c_end[EP(e, q2)], c_last[EP(e, q2)])
    fi;
    q0 = 0; q1 = 0; q2 = 0
}

/* where partition p starts when the worker has committed nothing in its epoch: the seed */
inline seed(p) {
    if
    :: e == 0 || sp_fresh[EP(e, p)] -> ls[p] = 0; lb[p] = 0   /* startingOffsets: earliest, base 0 */
    :: else -> ls[p] = sp_off[EP(e, p)];
#ifdef MUTATION_NEW_OWNER_RESTARTS_CHAIN
        lb[p] = 0  /* MUTATION: the chain starts again */
#else
        lb[p] = sp_ts[EP(e, p)]
#endif
    fi
}

/* at a crash, write i of the batch (in flight) landed, is lost, or stays in flight (a zombie) */
inline orphan(i) {
    if
    :: wr[i] != 0 -> land(wr[i] - 1, wt[i]); printf("STEP   in-flight write of record %d (ts %d) landed\n", wr[i] - 1, wt[i])
    :: wr[i] != 0 -> printf("STEP   in-flight write of record %d (ts %d) lost\n", wr[i] - 1, wt[i])
    :: wr[i] != 0 ->
        printf("STEP   in-flight write of record %d (ts %d) still in flight\n", wr[i] - 1, wt[i]);
        k = 0;
        do
        :: k < NZ && zrec[k] == 0 -> break
        :: k < NZ && zrec[k] != 0 -> k++
        :: k == NZ -> assert(false) /* the model's pool of late writes is too small */
        od;
        zrec[k] = wr[i]; zts[k] = wt[i]; k = 0
    :: else -> skip
    fi;
    wr[i] = 0; wt[i] = 0
}

proctype worker(byte e; byte w) {
    byte d, p, k, n, rec, ts, q0, q1, q2;
    bool crashed, replay, left;
    byte ls[P];      /* the batch: start, end, base (then the chain) per partition */
    byte le[P];
    byte lb[P];
    byte wr[CAP];    /* its writes: record id + 1, timestamp */
    byte wt[CAP];

    d = D(e, w);
restart:
    atomic {
        if
        :: crashed ->
            printf("STEP W%d.%d crash %d (power loss)\n", e, w, crashes);
            orphan(0); orphan(1);
            /* a seal linked but not made durable by a directory fsync: there or gone */
            if
            :: d_seal[d] == LINKED -> d_seal[d] = ABSENT; printf("STEP   seal lost\n")
            :: d_seal[d] == LINKED -> skip
            :: else -> skip
            fi;
            p = 0; n = 0; rec = 0; ts = 0; left = false; replay = false; crashed = false;
            ls[0] = 0; ls[1] = 0; ls[2] = 0; le[0] = 0; le[1] = 0; le[2] = 0; lb[0] = 0; lb[1] = 0; lb[2] = 0;
            check_group()
        :: else -> skip
        fi;
        if
        :: e > 0 && !d_exists[d] ->
            /* the first start in a new epoch: the older epoch on this volume (ordinal w) must be sealed */
            k = e;
            do
            :: k > 0 && !d_exists[D(k - 1, w)] -> k--
            :: k > 0 && d_exists[D(k - 1, w)] ->
                if
                :: d_seal[D(k - 1, w)] == ABSENT -> printf("STEP W%d.%d finds epoch %d on its volume not sealed: refuses to start\n", e, w, k - 1)
                :: else -> skip
                fi;
                assert(d_seal[D(k - 1, w)] != ABSENT); /* older_epoch_sealed */
                break
            :: k == 0 -> break
            od;
            k = 0
        :: else -> skip
        fi;
        d_exists[d] = true;
        /* opening the checkpoint fsyncs its directories: a linked seal is durable from here */
        printf("STEP W%d.%d starts\n", e, w);
        if
        :: d_seal[d] == LINKED -> d_seal[d] = DURABLE; printf("STEP W%d.%d fsyncs its directory: its seal is durable\n", e, w)
        :: else -> skip
        fi;
        if
        :: e > 0 && d_files[d] == 0 ->
            d_files[d] = 1; printf("STEP W%d.%d writes its copy of the savepoint\n", e, w); maybe_crash()
        :: else -> skip
        fi;
        if
        :: e > 0 && d_files[d] == 1 ->
            d_files[d] = 2; printf("STEP W%d.%d writes its metadata (%d workers, index %d)\n", e, w, par[e], w); maybe_crash()
        :: else -> skip
        fi;
        if
        :: d_seal[d] != ABSENT ->
#ifdef MUTATION_SEALED_WORKER_PLANS_AGAIN
            printf("STEP W%d.%d finds its seal and ignores it (MUTATION)\n", e, w)
#else
            printf("STEP W%d.%d finds its seal: parks\n", e, w);
            goto parked
#endif
        :: else -> skip
        fi;
        /* recovery: an open batch is replayed first, with exactly its ranges and bases */
        if
        :: d_open[d] ->
            p = 0;
            do
            :: p < P -> if :: OWNS(e, w, p) -> ls[p] = o_start[EP(e, p)]; le[p] = o_end[EP(e, p)]; lb[p] = o_base[EP(e, p)] :: else -> skip fi; p++
            :: else -> break
            od;
            p = 0;
            replay = true;
            print_ranges(true)
        :: else -> skip
        fi;
        /* a worker that starts commits the ends of its last committed batch to the group, once */
        if
        :: d_commit[d] && !replay ->
            p = 0;
            do
            :: p < P -> if :: OWNS(e, w, p) -> group[p] = c_end[EP(e, p)] :: else -> skip fi; p++
            :: else -> break
            od;
            p = 0;
            check_group()
        :: else -> skip
        fi
    };

batch:
    /* one batch (or the replay of the open one), crashes possible between its steps */
    atomic {
        if
        :: replay -> replay = false
        :: else ->
            /* a batch boundary: the barrier, if it reached this worker (the operator repeats it) */
            if
            :: e < NE - 1 && bar[e] -> goto seal
            :: true -> skip
            fi;
            /* plan from the newest commit, or from the seed */
            left = false; p = 0;
            do
            :: p < P ->
                if
                :: OWNS(e, w, p) && d_commit[d] -> ls[p] = c_end[EP(e, p)]; lb[p] = c_last[EP(e, p)]
                :: OWNS(e, w, p) && !d_commit[d] -> seed(p);
#ifdef AGED_OUT
                    /* Kafka's retention may have removed records committed in an earlier epoch */
                    if
                    :: e > 0 && sp_fresh[EP(e, p)] ->
                        k = 0; n = 0;
                        do
                        :: k < e -> if :: c_end[EP(k, p)] > n -> n = c_end[EP(k, p)] :: else -> skip fi; k++
                        :: else -> break
                        od;
                        do
                        :: ls[p] < n -> ls[p]++
                        :: true -> break
                        od;
                        if :: ls[p] > 0 -> printf("STEP W%d.%d: Kafka's earliest offset of p%d is %d (retention)\n", e, w, p, ls[p]) :: else -> skip fi;
                        k = 0; n = 0
                    :: else -> skip
                    fi
#endif
                    skip
                :: else -> skip
                fi;
                if :: OWNS(e, w, p) && ls[p] < R -> left = true :: else -> skip fi;
                p++
            :: else -> break
            od;
            p = 0;
            if
            :: !left ->
                ls[0] = 0; ls[1] = 0; ls[2] = 0; lb[0] = 0; lb[1] = 0; lb[2] = 0;
                if
                :: e == NE - 1 -> finished[w] = true; printf("STEP W%d.%d has read everything\n", e, w); goto end
                :: else -> printf("STEP W%d.%d has read everything, waits for the barrier\n", e, w); goto idle
                fi
            :: else -> left = false
            fi;
            /* ranges: 1 or 2 records in all; k is the last owned partition with records left */
            k = 0; p = 0;
            do
            :: p < P -> if :: OWNS(e, w, p) && ls[p] < R -> k = p :: else -> skip fi; p++
            :: else -> break
            od;
            n = 0; p = 0;
            do
            :: p < P ->
                le[p] = ls[p];
                if
                :: OWNS(e, w, p) && ls[p] < R && n < CAP -> le[p] = ls[p] + 1; n++
                :: OWNS(e, w, p) && ls[p] + 1 < R && n + 2 <= CAP -> le[p] = ls[p] + 2; n = n + 2
                :: !(p == k && n == 0) -> skip
                fi;
                p++
            :: else -> break
            od;
            p = 0; n = 0; k = 0;
            /* the offsets entry, durable */
            p = 0;
            do
            :: p < P -> if :: OWNS(e, w, p) -> o_start[EP(e, p)] = ls[p]; o_end[EP(e, p)] = le[p]; o_base[EP(e, p)] = lb[p] :: else -> skip fi; p++
            :: else -> break
            od;
            p = 0;
            d_open[d] = true;
            print_ranges(false);
            maybe_crash()
        fi;

        /* read the ranges and send one write per record, with its chain timestamp */
        n = 0; p = 0;
        do
        :: p < P ->
            if
            :: OWNS(e, w, p) ->
                assert(g_reader[EP(e, p)] == 0 || g_reader[EP(e, p)] == w + 1); /* single_owner */
                g_reader[EP(e, p)] = w + 1;
                rec = p*R + ls[p];
                do
                :: rec < p*R + le[p] ->
                    if
                    :: g_epoch[rec] != 0 && g_epoch[rec] != e + 1 ->
                        printf("STEP W%d.%d reads record %d, which epoch %d read already\n", e, w, rec, g_epoch[rec] - 1)
                    :: else -> skip
                    fi;
                    assert(g_epoch[rec] == 0 || g_epoch[rec] == e + 1); /* single_owner */
                    g_epoch[rec] = e + 1;
                    if
                    :: lb[p] + 1 > rts[rec] -> ts = lb[p] + 1
                    :: else -> ts = rts[rec]
                    fi;
                    lb[p] = ts;
                    if
                    :: ts != exp_ts[rec] -> printf("STEP W%d.%d writes record %d with ts %d; its chain gives it %d\n", e, w, rec, ts, exp_ts[rec])
                    :: else -> skip
                    fi;
                    assert(ts == exp_ts[rec]); /* timestamps_stable */
                    wr[n] = rec + 1; wt[n] = ts; n++;
                    rec++
                :: else -> break
                od
            :: else -> skip
            fi;
            p++
        :: else -> break
        od;
        p = 0; rec = 0; ts = 0;
        printf("STEP W%d.%d reads its batch: %d writes sent\n", e, w, n);
        n = 0;
        /* Cassandra acknowledges them, in any order; a crash leaves any of them in flight */
        maybe_crash();
        k = 0;
        do
        :: k < CAP && wr[k] != 0 ->
            land(wr[k] - 1, wt[k]);
            printf("STEP W%d.%d write of record %d (ts %d) acknowledged\n", e, w, wr[k] - 1, wt[k]);
            wr[k] = 0; wt[k] = 0; k++
        :: else -> break
        od;
        k = 0;
        /* commit: the ends and the last timestamps */
        p = 0;
        do
        :: p < P -> if :: OWNS(e, w, p) -> c_end[EP(e, p)] = le[p]; c_last[EP(e, p)] = lb[p] :: else -> skip fi; p++
        :: else -> break
        od;
        p = 0;
        d_commit[d] = true; d_open[d] = false;
        /* the offsets entry of a committed batch is read again by no one (its ends are the commit's) */
        p = 0;
        do
        :: p < P ->
            if
            :: OWNS(e, w, p) -> o_start[EP(e, p)] = 0; o_end[EP(e, p)] = 0;
#ifndef MUTATION_SEAL_FROM_OFFSETS_NOT_COMMITS
                o_base[EP(e, p)] = 0
#endif
            :: else -> skip
            fi;
            p++
        :: else -> break
        od;
        p = 0;
        ls[0] = 0; ls[1] = 0; ls[2] = 0; le[0] = 0; le[1] = 0; le[2] = 0; lb[0] = 0; lb[1] = 0; lb[2] = 0;
        print_commit();
        maybe_crash();
        /* group offsets */
        p = 0;
        do
        :: p < P -> if :: OWNS(e, w, p) -> group[p] = c_end[EP(e, p)] :: else -> skip fi; p++
        :: else -> break
        od;
        p = 0;
        printf("STEP W%d.%d commits the group offsets\n", e, w);
        check_group();
        maybe_crash()
    };
    goto batch;

idle:
    (bar[e]) -> goto seal;

seal:
    atomic {
        /* sealed: where each owned partition's chain stands (create-only: a seal never changes) */
        if
        :: d_seal[d] != ABSENT -> printf("STEP W%d.%d cannot seal again (the name exists): parks\n", e, w); goto parked
        :: else -> skip
        fi;
        p = 0;
        do
        :: p < P ->
            if
            :: OWNS(e, w, p) && d_commit[d] ->
                s_off[EP(e, p)] = c_end[EP(e, p)];
#ifdef MUTATION_SEAL_FROM_OFFSETS_NOT_COMMITS
                s_ts[EP(e, p)] = o_base[EP(e, p)]; /* MUTATION: where the last batch's chain began */
#else
                s_ts[EP(e, p)] = c_last[EP(e, p)];
#endif
                s_fresh[EP(e, p)] = false
            :: OWNS(e, w, p) && !d_commit[d] ->
                /* nothing committed in this epoch: where it started */
#ifdef MUTATION_EMPTY_SEAL_FORGETS_SAVEPOINT
                s_off[EP(e, p)] = 0; s_ts[EP(e, p)] = 0; s_fresh[EP(e, p)] = true /* MUTATION: "committed nothing" */
#else
                seed(p); s_off[EP(e, p)] = ls[p]; s_ts[EP(e, p)] = lb[p]; s_fresh[EP(e, p)] = (e == 0 || sp_fresh[EP(e, p)]);
                ls[p] = 0; lb[p] = 0
#endif
            :: else -> skip
            fi;
            p++
        :: else -> break
        od;
        p = 0;
        d_seal[d] = LINKED;
        printf("STEP W%d.%d commits no more: sealed (linked)\n", e, w);
        p = 0;
        do
        :: p < P && OWNS(e, w, p) && s_fresh[EP(e, p)] -> printf("STEP   p%d from startingOffsets (committed nothing)\n", p); p++
        :: p < P && OWNS(e, w, p) && !s_fresh[EP(e, p)] -> printf("STEP   p%d at %d, last ts %d\n", p, s_off[EP(e, p)], s_ts[EP(e, p)]); p++
        :: p < P && !OWNS(e, w, p) -> p++
        :: else -> break
        od;
        p = 0;
        maybe_crash()
    };
    atomic {
        d_seal[d] = DURABLE;
        printf("STEP W%d.%d seal durable (directory fsync), reported: at the barrier\n", e, w);
        maybe_crash()
    };

parked:
    /* parked: it stays so until its pod is deleted, and may restart meanwhile (it finds its seal) */
end_parked:
    atomic { crashes < MAXCRASH -> crashes++; crashed = true; goto restart };
end:
    skip
}

inline op_crash() {
    if
    :: crashes < MAXCRASH -> crashes++; goto op_crashed
    :: true -> skip
    fi
}

/* what the operator takes for the savepoint from old worker w: its seal, as reported */
inline take_seal() {
    p = 0;
    do
    :: p < P -> if :: OWNS(e, w, p) -> rep_off[p] = s_off[EP(e, p)]; rep_ts[p] = s_ts[EP(e, p)]; rep_fresh[p] = s_fresh[EP(e, p)] :: else -> skip fi; p++
    :: else -> break
    od;
    p = 0
}

#define SEALED(w) (par[e] <= (w) || d_seal[D(e, w)] == DURABLE)
#define LINKED_OR_SEALED(w) (par[e] <= (w) || d_seal[D(e, w)] != ABSENT)

proctype operator() {
    byte e, w, p, k;
    byte rep_off[P];    /* the savepoint being made, per partition */
    byte rep_ts[P];
    bool rep_fresh[P];

restart:
    atomic {
        /* the applied shape: the newest savepoint */
        e = 0; k = 1;
        do
        :: k < NE && sp[k] -> e = k; k++
        :: k < NE && !sp[k] -> k++
        :: k == NE -> break
        od;
        k = 0
    };
    /* the epoch's pods that do not exist yet, one by one */
    w = 0;
    do
    :: w < par[e] && started[D(e, w)] -> w++
    :: w < par[e] && !started[D(e, w)] ->
        atomic { started[D(e, w)] = true; run worker(e, w); printf("STEP operator starts W%d.%d\n", e, w); w++; op_crash() }
    :: w == par[e] -> break
    od;
    w = 0;
    if
    :: e == NE - 1 -> goto end
    :: else -> skip
    fi;
    /* the spec asks for another shape: the barrier, at any moment */
    atomic {
        if
        :: !bar[e] -> bar[e] = true; printf("STEP operator requests the barrier (epoch %d) of epoch %d's workers\n", e + 1, e)
        :: else -> skip
        fi;
        op_crash()
    };
    /* the savepoint, from every worker's seal; one ConfigMap, created whole or not at all */
    atomic {
#if defined(MUTATION_SAVEPOINT_BEFORE_SEAL)
        /* MUTATION: each worker's newest commit, whether it sealed or not */
        w = 0;
        do
        :: w < par[e] ->
            p = 0;
            do
            :: p < P ->
                if
                :: OWNS(e, w, p) && d_commit[D(e, w)] -> rep_off[p] = c_end[EP(e, p)]; rep_ts[p] = c_last[EP(e, p)]; rep_fresh[p] = false
                :: OWNS(e, w, p) && !d_commit[D(e, w)] && (e == 0 || sp_fresh[EP(e, p)]) -> rep_off[p] = 0; rep_ts[p] = 0; rep_fresh[p] = true
                :: OWNS(e, w, p) && !d_commit[D(e, w)] && !(e == 0 || sp_fresh[EP(e, p)]) -> rep_off[p] = sp_off[EP(e, p)]; rep_ts[p] = sp_ts[EP(e, p)]; rep_fresh[p] = false
                :: else -> skip
                fi;
                p++
            :: else -> break
            od;
            p = 0;
            w++
        :: else -> break
        od;
        printf("STEP operator takes each worker's newest commit for the savepoint (MUTATION)\n");
#elif defined(MUTATION_REPORT_SEAL_BEFORE_FSYNC)
        LINKED_OR_SEALED(0) && LINKED_OR_SEALED(1) && LINKED_OR_SEALED(2) ->
        w = 0;
        do
        :: w < par[e] -> take_seal(); w++
        :: else -> break
        od;
        printf("STEP operator has every seal, some reported before they were durable (MUTATION)\n");
#else
        SEALED(0) && SEALED(1) && SEALED(2) ->
        w = 0;
        do
        :: w < par[e] -> take_seal(); w++
        :: else -> break
        od;
        printf("STEP operator has every worker's seal\n");
#endif
        w = 0;
        /* a crash before the ConfigMap exists: the restarted operator makes it again */
        op_crash();
        p = 0;
        do
        :: p < P -> sp_off[EP(e + 1, p)] = rep_off[p]; sp_ts[EP(e + 1, p)] = rep_ts[p]; sp_fresh[EP(e + 1, p)] = rep_fresh[p]; p++
        :: else -> break
        od;
        p = 0;
        sp[e + 1] = true;
        printf("STEP operator creates savepoint %d (the ConfigMap)\n", e + 1);
        do
        :: p < P && rep_fresh[p] -> printf("STEP   p%d from startingOffsets\n", p); p++
        :: p < P && !rep_fresh[p] -> printf("STEP   p%d at %d, last ts %d\n", p, rep_off[p], rep_ts[p]); p++
        :: else -> break
        od;
        p = 0;
        rep_off[0] = 0; rep_off[1] = 0; rep_off[2] = 0; rep_ts[0] = 0; rep_ts[1] = 0; rep_ts[2] = 0;
        rep_fresh[0] = false; rep_fresh[1] = false; rep_fresh[2] = false;
        op_crash()
    };
    goto restart;

op_crashed:
    atomic {
        printf("STEP operator crash %d: restarts\n", crashes);
        p = 0; w = 0; e = 0;
        rep_off[0] = 0; rep_off[1] = 0; rep_off[2] = 0; rep_ts[0] = 0; rep_ts[1] = 0; rep_ts[2] = 0;
        rep_fresh[0] = false; rep_fresh[1] = false; rep_fresh[2] = false
    };
    goto restart;
end:
    skip
}

init {
    byte p, r, rec, prev, k;
    atomic {
        /*
         * partition 0: equal timestamps; 1: increasing; 2: equal, above 0's. Keys collide within
         * partitions 0 and 2 and across all three; the final value of key 0 is partition 2's
         * last record, whose timestamp comes from the chain alone.
         */
        rkey[0] = 0; rkey[1] = 1;
        rkey[2] = 1; rkey[3] = 0;
        rkey[4] = 0; rkey[5] = 0;
        rts[0] = 1; rts[1] = 1;
        rts[2] = 1; rts[3] = 2;
        rts[4] = 2; rts[5] = 2;
        par[0] = 2; par[1] = M1;
#ifdef M2
        par[2] = M2;
#endif
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
        p = 0; r = 0; rec = 0; prev = 0; k = 0;
        run operator()
    };
    /* the end: the last epoch's workers have read everything */
    (finished[0] && (par[NE - 1] < 2 || finished[1]) && (par[NE - 1] < 3 || finished[2]));
    atomic {
        printf("STEP the last epoch's workers have read everything\n");
        /* writes still in flight from crashed senders land now, after everything else, or never */
        k = 0;
        do
        :: k < NZ && zrec[k] != 0 ->
            if
            :: land(zrec[k] - 1, zts[k]); printf("STEP late write of record %d (ts %d) lands\n", zrec[k] - 1, zts[k])
            :: printf("STEP late write of record %d (ts %d) lost\n", zrec[k] - 1, zts[k])
            fi;
            zrec[k] = 0; zts[k] = 0; k++
        :: k < NZ && zrec[k] == 0 -> k++
        :: k == NZ -> break
        od;
        k = 0;
        do
        :: k < KEYS ->
            if
            :: tval[k] != exp_val[k] || tts[k] != exp_tts[k] ->
                printf("STEP key %d holds record %d (ts %d); applying each record once gives record %d (ts %d)\n",
                    k, tval[k] - 1, tts[k], exp_val[k] - 1, exp_tts[k])
            :: else -> skip
            fi;
            assert(tval[k] == exp_val[k] && tts[k] == exp_tts[k]); /* table_exact */
            k++
        :: else -> break
        od
    }
}
