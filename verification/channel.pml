/*
 * A model of CspNet's channel engine: one channel (optionally buffered), its reader and its
 * writer, each either a plain party (Read/Write) or an alternation (Alternative.PriSelect over
 * the channel's guard and a timeout guard), a poisoner, a hold (a remote selecting reader's
 * tentative take, committed or released) and a reservation (a remote writer's slot).
 *
 * Every critical section of the code (lock (channel)) is one atomic step here; the
 * alternation's state word is changed by compare-and-swaps, each an atomic step of its own.
 * docs/ARCHITECTURE.md ("The protocol model") maps every inline below to its method.
 *
 * Configuration (spin -D...):
 *   CAP       buffer capacity (0: unbuffered)              N        values the writer sends
 *   WSEL      the writer offers through an alternation     RSEL     the reader selects before it reads
 *   TIMERS    each alternation also has a timeout guard that may fire at any time
 *   POISON    a third process poisons the channel at any time
 *   HOLD      a remote selecting reader holds values, releases the first, commits the rest
 *   RESERVE   a remote writer puts M values through reserved slots (values 101..)
 *   FIXED     the corrected hand-over (MayHandToReaderLocked): a put, a reserved put or a
 *             released hold goes straight to a parked reader only while nothing is buffered.
 *             Without it, the model is the protocol before that correction.
 *   HOLD_ORDER  with HOLD: also check that the reader's own values rise (without HOLD_BACK
 *             they do not: see docs/ARCHITECTURE.md, "The protocol model").
 *   HOLD_BACK the corrected hold (TakesHeldBackLocked): while a buffered value is held, nothing
 *             behind it is handed to the reader or a hold, and the poison leaves the reader
 *             parked; the commit or release serves it (ServeParkedReadersLocked).
 */

#ifndef N
#define N 3
#endif
#ifndef CAP
#define CAP 1
#endif
#ifndef M
#define M 2
#endif

#define QMAX (CAP + 3)

/* A queue's single entry: nobody, a plain waiter, an alternation's selection waiter. */
#define NONE 0
#define PLAIN 1
#define SEL 2

/* AlternativeCore's state word. */
#define IDLE 0
#define SELECTING 1
#define WAITING 2
#define DONE_CH 3      /* DoneBase + the channel guard */
#define DONE_TIMER 4   /* DoneBase + the timeout guard */
#define FAILED 5

/* ---- the channel ------------------------------------------------------------------------ */
byte q[QMAX];      /* the buffer in take order: front slots, inner buffer, overflow */
byte blen;         /* items in q */
byte nfront;       /* FrontSlotBuffer: items a released hold put back in front */
byte novf;         /* FrontSlotBuffer: values waiting behind a full inner buffer */
bool wrapped;      /* the buffer is wrapped in a FrontSlotBuffer */
bool heldOut;      /* FrontSlotBuffer.HeldOut: a hold has a buffered value out */
byte reserved;     /* _reserved */
bool poisoned;
byte rq;           /* _readers: NONE, PLAIN or SEL */
byte wq;           /* _writers: NONE, PLAIN or SEL (a held writer is in neither) */

/* ---- the reader ------------------------------------------------------------------------- */
byte r_item; bool r_claimed; bool r_err;               /* its plain waiter */
byte ra = IDLE; bool ra_sig; bool ra_en;               /* its alternation */
byte rn_item; bool rn_claimed; bool rn_err;            /* the input end's SelectionWaiter */
bool held; byte held_item; bool held_poison;           /* the input end's hand-over slot */
byte last1;        /* the last value of the writer the reader saw */
byte last2;        /* the last value of the remote writer the reader saw */
byte got;          /* values the reader took */
short seen1;       /* the writer's values taken by anyone (bit k) */
short seen2;       /* the remote writer's values taken by anyone (bit k - 100) */
bool r_done;       /* the reader ended (all values, or the poison) */
bool r_poisoned;

/* ---- the writer ------------------------------------------------------------------------- */
byte w_item; bool w_claimed; bool w_err;               /* its plain waiter */
bool w_held;       /* its plain waiter is claimed by a hold and not woken */
byte wa = IDLE; bool wa_sig; bool wa_en;               /* its alternation */
byte wn_item; bool wn_claimed; bool wn_err;            /* the output end's SelectionWaiter */
bool w_fail;       /* the output end's Failure (poison) */
byte sent;         /* writes that completed */
bool w_done;
bool w_poisoned;

/* ---- the holder and the remote writer ----------------------------------------------------- */
byte h_committed;  /* values the holder took for good */
byte h_last;
byte rsent;        /* the remote writer's values put */
bool h_done;
bool rw_done;

/* ---- the buffer (FifoBuffer, or a FrontSlotBuffer around it) ------------------------------ */
#define inner (blen - nfront - novf)
#define innerFull (inner >= CAP)
/* IsFullLocked: the buffer's IsFull, or its count with the reservations at capacity */
#define isFull (innerFull || (reserved != 0 && blen + reserved >= CAP))

inline bufPut(v) {
  assert(blen < QMAX);
  if
  :: wrapped && (novf > 0 || innerFull) -> novf++
  :: else -> assert(!innerFull)      /* FifoBuffer.Put on a full buffer would throw */
  fi;
  q[blen] = v; blen++
}

inline bufTake(v) {
  assert(blen > 0);
  v = q[0];
  byte i_ = 0;
  do
  :: i_ + 1 < blen -> q[i_] = q[i_ + 1]; i_++
  :: else -> break
  od;
  q[blen - 1] = 0; blen--;
  if
  :: nfront > 0 -> nfront--
  :: else -> if :: novf > 0 -> novf-- :: else fi    /* an overflow value moves in */
  fi
}

inline bufPutBack(v) {   /* FrontSlotBuffer.PutBack: the only hold goes first */
  assert(blen < QMAX);
  byte j_ = blen;
  do
  :: j_ > 0 -> q[j_] = q[j_ - 1]; j_--
  :: else -> break
  od;
  q[0] = v; blen++; nfront++; wrapped = 1
}

/* ---- AlternativeCore: claims and signals (GuardSlot.TryClaim, Signal) --------------------- */
/* The enabled check is left out: a partner reads it before its compare-and-swap, so it may see a
   guard enabled that the owner is disabling; its claim still wins, until the withdraw. */
inline raClaim(ok) {
  if
  :: (ra == SELECTING || ra == WAITING) -> ra = DONE_CH; ok = 1
  :: else -> ok = 0
  fi
}
inline waClaim(ok) {
  if
  :: (wa == SELECTING || wa == WAITING) -> wa = DONE_CH; ok = 1
  :: else -> ok = 0
  fi
}
/* WaiterQueue.SignalSelections: the alternation parked there rescans. */
inline signalReaders() {
  if
  :: rq == SEL -> ra_sig = 1; if :: ra == WAITING -> ra = SELECTING :: else fi
  :: else
  fi
}
inline signalWriters() {
  if
  :: wq == SEL -> wa_sig = 1; if :: wa == WAITING -> wa = SELECTING :: else fi
  :: else
  fi
}

/* ---- the hand-over under the lock ---------------------------------------------------------- */

/* TakesHeldBackLocked: a held buffered value may come back, so nothing behind it is taken. */
#ifdef HOLD_BACK
#define heldBack heldOut
#else
#define heldBack 0
#endif

/* TryTakeLocked: from the buffer (then refill from a parked writer), else from a parked writer. */
inline takeLocked(plainOnly, v, ok) {
  ok = 0;
  if
  :: heldBack -> skip
  :: !heldBack && blen > 0 ->
       bufTake(v); ok = 1;
       if
       :: wq == PLAIN -> wq = NONE; w_claimed = 1; bufPut(w_item); w_item = 0
       :: wq == SEL && !plainOnly ->
            wq = NONE; waClaim(c_);
            if :: c_ -> wn_claimed = 1; bufPut(wn_item) :: else fi
       :: else
       fi
  :: !heldBack && blen == 0 ->
       if
       :: wq == PLAIN -> wq = NONE; w_claimed = 1; v = w_item; w_item = 0; ok = 1
       :: wq == SEL && !plainOnly ->
            wq = NONE; waClaim(c_);
            if :: c_ -> wn_claimed = 1; v = wn_item; ok = 1 :: else fi
       :: else
       fi
  fi
}

/* MayHandToReaderLocked: whether a put may go straight to a parked reader. Today: always (plain
   readers park only on an empty buffer; an alternation's reader, though, may stay parked beside
   values an enabling offer, a reservation or a released hold put in the buffer). FIXED: only
   while nothing is buffered; the value then queues behind the buffered ones, and the reader,
   signalled when they went in, takes the oldest in its next scan. */
#ifdef FIXED
#define mayHandToReader (blen == 0 && !heldBack)
#else
#define mayHandToReader 1
#endif

/* TryPutLocked: to a parked reader, else into the buffer if there is room. */
inline putLocked(v, plainOnly, ok) {
  ok = 0;
  if
  :: mayHandToReader && rq == PLAIN -> rq = NONE; r_claimed = 1; r_item = v; ok = 1
  :: mayHandToReader && rq == SEL && !plainOnly ->
       rq = NONE; raClaim(c_);
       if :: c_ -> rn_claimed = 1; rn_item = v; ok = 1 :: else fi
  :: else
  fi;
  if
  :: !ok && CAP > 0 && !isFull -> bufPut(v); ok = 1
  :: else
  fi
}

/* ---- what the reader does with a value ------------------------------------------------------ */
/* Taken once: never a value twice, whoever takes it. */
inline takenOnce(v) {
  if
  :: v > 100 -> assert((seen2 & (1 << (v - 100))) == 0); seen2 = seen2 | (1 << (v - 100))
  :: else -> assert((seen1 & (1 << v)) == 0); seen1 = seen1 | (1 << v)
  fi
}

/* Per-writer FIFO for this reader. Without holds the reader is the only taker, so the writer's
   next value must be exactly the one after the last (nothing lost in between). With holds the
   holder takes some: the reader's values must still rise (HOLD_ORDER), and every value is
   taken once. */
inline receive(v) {
  takenOnce(v);
  if
  :: v > 100 -> assert(v > last2); last2 = v
  :: else ->
#ifdef HOLD
#ifdef HOLD_ORDER
       assert(v > last1);
#endif
#else
       assert(v == last1 + 1);
#endif
       last1 = v
  fi;
  got++
}

/* ---- the reader ---------------------------------------------------------------------------- */
#define TOTAL (N + (RESERVE_ON * M))
#ifdef RESERVE
#define RESERVE_ON 1
#else
#define RESERVE_ON 0
#endif

proctype Reader() {
  byte v; bool ok; bool c_;
  do
  :: got + h_committed >= TOTAL -> break
  :: else ->
#ifdef RSEL
     /* Alternative.PriSelect over (the input end, a timeout) */
     atomic { assert(ra == IDLE); ra = SELECTING }
scan:
     ra_sig = 0;                                   /* BeginScan */
     /* Scan, guard 0: CspChannel.TryCommitInput */
     if
     :: held -> skip
     :: else ->
        atomic {
          takeLocked(0, v, ok);
          if
          :: ok -> held = 1; held_item = v
          :: !ok && poisoned && !heldBack -> held = 1; held_poison = 1
          :: else
          fi
        }
     fi;
     if
     :: held -> ra = DONE_CH; goto chosen
     :: else
     fi;
#ifdef TIMERS
     /* Scan, guard 1: a timeout whose deadline may have passed */
     if
     :: ra = DONE_TIMER; goto chosen
     :: skip
     fi;
#endif
     /* EnableAll, guard 0: CspChannel.EnableInput */
     ra_en = 1;
     atomic {
       if
       :: held -> raClaim(c_)
       :: !held && !heldBack && (poisoned || blen > 0 || wq == PLAIN) ->
            raClaim(c_);
            if
            :: c_ ->
                 takeLocked(1, v, ok);
                 if :: ok -> held = 1; held_item = v :: else -> held = 1; held_poison = 1 fi;
                 signalWriters()
            :: else
            fi
       :: else ->
            assert(rq == NONE);                    /* ThrowIfCannotParkLocked: one reader */
            rn_claimed = 0; rn_err = 0; rn_item = 0;
            rq = SEL; if :: !heldBack -> signalWriters() :: else fi
       fi
     }
     /* WaitAsync / WaitBlocking: TryPark, park until moved out of Waiting */
     do
     :: ra != SELECTING -> break
     :: ra == SELECTING && ra_sig -> break          /* RescanDue */
     :: else ->
        atomic { if :: ra == SELECTING -> ra = WAITING :: else fi }
        if
        :: atomic { ra == WAITING && ra_sig -> ra = SELECTING }   /* TryPark's second look */
        :: else ->
           if
           :: ra != WAITING                            /* woken by a claim or a signal */
#ifdef TIMERS
           :: atomic { ra == WAITING -> ra = SELECTING; ra_sig = 1 }  /* deadline passed */
#endif
           fi
        fi
     od;
     /* DisableAll, guard 0: CspChannel.DisableInput (WithdrawIfArmed) */
     ra_en = 0;
     atomic {
       if :: rq == SEL -> rq = NONE :: else fi;
       if
       :: rn_claimed -> if :: rn_err -> held = 1; held_poison = 1 :: else -> held = 1; held_item = rn_item fi
       :: else
       fi;
       rn_claimed = 0; rn_err = 0; rn_item = 0
     }
     if
     :: ra == DONE_CH || ra == DONE_TIMER -> skip
     :: else -> ra = SELECTING; goto scan            /* Undecided: scan again */
     fi;
chosen:
     if
     :: ra == DONE_TIMER ->
          /* The timeout won: the channel guard consumed nothing. */
          assert(!held); ra = IDLE
     :: else ->
          ra = IDLE;
          /* ChannelReadEnd.Read: the hand-over slot */
          assert(held);
          if
          :: held_poison -> r_poisoned = 1; break
          :: else -> v = held_item; held = 0; held_item = 0; receive(v)
          fi
     fi
#else
     /* CspChannel.ReadDirect: TryReadOrPark, then park */
     atomic {
       takeLocked(0, v, ok);
       if
       :: ok -> receive(v)
       :: !ok && poisoned && !heldBack -> r_poisoned = 1
       :: else -> assert(rq == NONE); r_claimed = 0; r_err = 0; rq = PLAIN
       fi
     }
     if
     :: r_poisoned -> break
     :: !ok && !r_poisoned ->
          r_claimed;                                   /* SyncWaiter.WaitForPartner */
          atomic { if :: r_err -> r_poisoned = 1 :: else -> v = r_item; r_item = 0; receive(v) fi }
          if :: r_poisoned -> break :: else fi
     :: else
     fi
#endif
  od;
  r_done = 1
}

/* ---- the writer ---------------------------------------------------------------------------- */
proctype Writer() {
  byte k = 1; bool ok; bool c_; byte v;
  do
  :: k > N -> break
  :: else ->
#ifdef WSEL
     /* Offer(k), then Alternative.PriSelect over (the output end, a timeout) */
     atomic { assert(wa == IDLE); wa = SELECTING }
wscan:
     wa_sig = 0;
     /* Scan, guard 0: CspChannel.TryCommitOutput */
     atomic {
       if
       :: poisoned -> w_fail = 1; ok = 1
       :: else -> putLocked(k, 0, ok)
       fi
     }
     if
     :: ok -> wa = DONE_CH; goto wchosen
     :: else
     fi;
#ifdef TIMERS
     if
     :: wa = DONE_TIMER; goto wchosen
     :: skip
     fi;
#endif
     /* EnableAll, guard 0: CspChannel.EnableOutput */
     wa_en = 1;
     atomic {
       if
       :: poisoned -> waClaim(c_); if :: c_ -> w_fail = 1 :: else fi
       :: !poisoned && ((rq == PLAIN && mayHandToReader) || (CAP > 0 && !isFull)) ->
            waClaim(c_);
            if
            :: c_ -> putLocked(k, 1, ok); assert(ok); signalReaders()    /* DeliverClaimedLocked */
            :: else
            fi
       :: else ->
            assert(wq == NONE);
            wn_claimed = 0; wn_err = 0; wn_item = k;
            wq = SEL; if :: !heldBack -> signalReaders() :: else fi
       fi
     }
     do
     :: wa != SELECTING -> break
     :: wa == SELECTING && wa_sig -> break
     :: else ->
        atomic { if :: wa == SELECTING -> wa = WAITING :: else fi }
        if
        :: atomic { wa == WAITING && wa_sig -> wa = SELECTING }
        :: else ->
           if
           :: wa != WAITING
#ifdef TIMERS
           :: atomic { wa == WAITING -> wa = SELECTING; wa_sig = 1 }
#endif
           fi
        fi
     od;
     /* DisableAll, guard 0: CspChannel.DisableOutput */
     wa_en = 0;
     atomic {
       if :: wq == SEL -> wq = NONE :: else fi;
       if :: wn_claimed && wn_err -> w_fail = 1 :: else fi;
       wn_claimed = 0; wn_err = 0; wn_item = 0
     }
     if
     :: wa == DONE_CH || wa == DONE_TIMER -> skip
     :: else -> wa = SELECTING; goto wscan
     fi;
wchosen:
     if
     :: wa == DONE_TIMER -> wa = IDLE      /* the offer lost: offer the same value again */
     :: else ->
          wa = IDLE;
          if
          :: w_fail -> w_poisoned = 1; break
          :: else -> sent++; k++
          fi
     fi
#else
     /* CspChannel.WriteDirect: TryWriteOrPark, then park */
     atomic {
       if
       :: poisoned -> w_poisoned = 1; ok = 0
       :: else ->
            putLocked(k, 0, ok);
            if
            :: ok -> sent++; k++
            :: else -> assert(wq == NONE); w_claimed = 0; w_err = 0; w_item = k; wq = PLAIN
            fi
       fi
     }
     if
     :: w_poisoned -> break
     :: !ok && !w_poisoned ->
          (w_claimed && !w_held);                     /* SyncWaiter.WaitForPartner */
          atomic { if :: w_err -> w_poisoned = 1 :: else -> sent++; k++ fi }
          if :: w_poisoned -> break :: else fi
     :: else
     fi
#endif
  od;
  w_done = 1
}

/* ---- CspChannel.PoisonDirect ---------------------------------------------------------------- */
proctype Poisoner() {
  bool c_;
#ifdef POISON_LATE
  (w_done && rw_done);      /* poisons once every write completed: the readers then drain */
#endif
  atomic {
    poisoned = 1;
    if
    :: heldBack -> skip      /* readers stay parked: the held value may come back to them */
    :: !heldBack && rq == PLAIN -> rq = NONE; r_claimed = 1; r_err = 1
    :: !heldBack && rq == SEL -> rq = NONE; raClaim(c_); if :: c_ -> rn_claimed = 1; rn_err = 1 :: else fi
    :: else
    fi;
    if
    :: wq == PLAIN -> wq = NONE; w_claimed = 1; w_err = 1; w_item = 0
    :: wq == SEL -> wq = NONE; waClaim(c_); if :: c_ -> wn_claimed = 1; wn_err = 1 :: else fi
    :: else
    fi
  }
}

/* ---- holds: CspChannel.TryHold, Release, Commit ---------------------------------------------- */
/* EndBufferedHold, ServeParkedReadersLocked: reads go on; the reader parked meanwhile is served. */
inline endBufferedHold() {
  heldOut = 0;
#ifdef HOLD_BACK
  if
  :: blen > 0 && rq == PLAIN -> rq = NONE; takeLocked(0, v, ok); assert(ok); r_claimed = 1; r_item = v
  :: blen > 0 && rq == SEL ->
       rq = NONE; raClaim(c_);
       if :: c_ -> takeLocked(0, v, ok); assert(ok); rn_claimed = 1; rn_item = v :: else fi
  :: else
  fi;
  /* On a poisoned channel, a reader left with nothing to take gets the poison now. */
  if
  :: poisoned && blen == 0 && rq == PLAIN -> rq = NONE; r_claimed = 1; r_err = 1
  :: poisoned && blen == 0 && rq == SEL -> rq = NONE; raClaim(c_); if :: c_ -> rn_claimed = 1; rn_err = 1 :: else fi
  :: else
  fi;
  signalReaders(); signalWriters()
#endif
}

proctype Holder() {
  byte v; bool fromWriter; bool released; bool c_; bool ok;
  do
  :: got + h_committed >= TOTAL || r_done -> break
  :: atomic {
       (!heldBack && (blen > 0 || wq == PLAIN || poisoned)) ->     /* WhenHoldableAsync's watch, abstracted */
       if
       :: blen > 0 ->
            bufTake(v); fromWriter = 0; heldOut = 1; wrapped = 1;
            if
            :: wq == PLAIN -> wq = NONE; w_claimed = 1; bufPut(w_item); w_item = 0
            :: wq == SEL -> wq = NONE; waClaim(c_); if :: c_ -> wn_claimed = 1; bufPut(wn_item) :: else fi
            :: else
            fi
       :: blen == 0 && wq == PLAIN -> wq = NONE; w_claimed = 1; w_held = 1; v = w_item; fromWriter = 1
       :: else -> v = 0       /* poisoned and drained */
       fi
     }
     if
     :: v == 0 -> break
     :: else
     fi;
     if
     :: !released ->
          /* Release: give it back exactly where it was */
          released = 1;
          atomic {
            if
            :: fromWriter ->
                 if
                 :: poisoned -> w_err = 1; w_item = 0; w_held = 0
                 :: else ->
                      putLocked(v, 0, ok);
                      if
                      :: ok -> w_item = 0; w_held = 0
                      :: else -> assert(wq == NONE); w_claimed = 0; w_held = 0; w_item = v; wq = PLAIN   /* Unclaim, EnqueueFront */
                      fi
                 fi
            :: else ->
#ifdef HOLD_BACK
                 bufPutBack(v); endBufferedHold()
#else
                 heldOut = 0;
                 if
                 :: !poisoned && mayHandToReader && rq == PLAIN -> rq = NONE; r_claimed = 1; r_item = v
                 :: !poisoned && mayHandToReader && rq == SEL ->
                      rq = NONE; raClaim(c_);
                      if :: c_ -> rn_claimed = 1; rn_item = v :: else -> bufPutBack(v) fi
                 :: else -> bufPutBack(v)
                 fi
#endif
            fi;
            assert(!fromWriter || w_held == 0 || wq == PLAIN)
          }
     :: else ->
          /* Commit: the remote reader took it */
          atomic {
            takenOnce(v);
            if :: v <= 100 -> assert(v > h_last); h_last = v :: else fi;
            h_committed++;
            if :: fromWriter -> w_held = 0 :: else -> endBufferedHold() fi
          }
     fi
  od;
  h_done = 1
}

/* ---- reservations: TryReserve, PutReserved, ReleaseReservations ------------------------------ */
proctype RemoteWriter() {
  byte i = 1; bool gaveBack; bool c_; bool ok;
  do
  :: i > M -> break
  :: poisoned -> break
  :: atomic {
       /* WhenReservableAsync's watch, abstracted; TryReserve(1) */
       (i <= M && (poisoned || (CAP > 0 && blen + reserved < CAP))) ->
       if :: !poisoned -> reserved++ :: else fi
     }
     if
     :: poisoned && reserved == 0 -> break
     :: else
     fi;
     if
     :: !gaveBack ->
          gaveBack = 1;
          atomic {
            /* ReleaseReservations(1): parked writers move in */
            reserved--;
            if
            :: !isFull && wq == PLAIN -> wq = NONE; w_claimed = 1; bufPut(w_item); w_item = 0
            :: !isFull && wq == SEL -> wq = NONE; waClaim(c_); if :: c_ -> wn_claimed = 1; bufPut(wn_item) :: else fi
            :: else
            fi
          }
     :: else ->
          atomic {
            /* PutReserved: to a parked reader, else into the buffer */
            reserved--;
            if
            :: mayHandToReader && rq == PLAIN -> rq = NONE; r_claimed = 1; r_item = 100 + i
            :: mayHandToReader && rq == SEL ->
                 rq = NONE; raClaim(c_);
                 if :: c_ -> rn_claimed = 1; rn_item = 100 + i :: else -> bufPut(100 + i) fi
            :: else -> bufPut(100 + i)
            fi;
            rsent++; i++
          }
     fi
  od;
  rw_done = 1
}

init {
  atomic {
    run Reader();
    run Writer();
#ifdef POISON
    run Poisoner();
#endif
#ifdef HOLD
    run Holder();
#endif
#ifdef RESERVE
    run RemoteWriter();
#endif
  }
  /* The end: nothing lost, nothing left behind. */
#ifndef HOLD
  h_done = 1;
#endif
#ifndef RESERVE
  rw_done = 1;
#endif
  (r_done && w_done && h_done && rw_done);
#ifndef POISON
  assert(!r_poisoned && !w_poisoned);
  assert(got + h_committed == TOTAL);
#else
  /* Poison reached both parties, and every completed write was read before the poison. */
  assert(r_poisoned || got + h_committed == TOTAL);
  assert(w_poisoned || sent == N);
  /* Values still buffered after the poison stay readable (a released hold may put one back). */
  assert(!r_poisoned || got + h_committed + blen == sent + rsent);
#endif
}
