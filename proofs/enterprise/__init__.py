"""The enterprise model: MC-MQDSRP replication for any number of servers, in the style of Ivy and mypyvy.

What it is. A first-order transition system over uninterpreted sorts (servers, partitions, directory
objects, sequence numbers, sync replies): the state is relations and functions over them
(:mod:`.vocabulary`), each transition is one handler of the reference or a group the pseudo-code
raises together, named and cited as the refimpl handler is (:mod:`.transitions`), and the
invariants are universally quantified over every sort (:mod:`.invariants`). Every (invariant,
transition) pair is checked in its own Z3 solver (:mod:`.check`): a proof holds for every
enterprise, whatever its number of servers, partitions, objects or messages. Sequence numbers
keep only their order (a total order by axiom, MIN and MAX its ends; "+ 1" is "the next number,
none between"), so the formulas stay in the effectively propositional fragment (EPR: no function
from a sort back into one it depends on), where Z3 decides them.

What is modelled. Per server and partition the replication state of 3.1.1.2.3 (LastSeqNumber,
PurgedSeqNumber, AllowedPurgeSeqNumber, ChangeMissingWindow, PurgeState NORMAL or SYNC0,
AuthorityName), the server's directory objects with their SeqNumber, its DeletedObjectCollection,
its PSC neighbors with their acknowledgements; the role of each server (PEC, PSC, BSC) and its site;
the network as the set of messages in flight (change propagations, SeqNumberHeaders intersite and
intrasite, sync requests and replies with their changes, AlreadyPurged, PSC acks): a message is never
removed, so loss, duplication and any order of delivery come for free. Ghost state: the authority's
LastSeqNumber and PurgedSeqNumber of each partition, its history (which change touched or deleted which
object), the servers the enterprise has known, and which PSC took a site over from which. Both readings:
each transition branches on :class:`~mqspec.proofs.z3_reading.Reading` where refimpl branches on
``ctx.clarified`` (E-103, E-106, E-108, E-116, E-117, E-118, E-119, E-130, E-131, E-133, E-166, E-264,
E-311, E-314).

The authority. 1.3.1.2 makes the PEC the owner of the enterprise partition and a site's PSC the owner of
the site's partition; a server is the partition's authority when it runs, holds the partition and owns it
(``auth``: what 3.2.7.2's "myEnterprise or mySite" tests). A handover (refimpl/handover.py, E-313) is
declared as: a site's PSC stops for good; a server whose name the enterprise has never had, a PSC of the
same site, takes over its persisted replication state and directory (3.1.1) and owns the site's
partition; its volatile state starts over. The PEC never moves (3.1.7.2.10's enterprise update is not a
handover). Servers join (3.1.3.1) as BSCs or as the PSC of a new site.

What is abstracted, and why.

* Arithmetic that is not order stays in the per-server proof (:mod:`mqspec.proofs.z3_model`, 64-bit
  integers): the 1,024-change buffer of Purge Deleted Objects is a purge point chosen below
  LastSeqNumber (or MIN; the per-server ``purge_keeps_last_1024_changes`` proves the real one), and the
  every-256-changes cadence of PSC acks and purges is a choice of when: Send PSC Ack and Purge Deleted
  Objects are transitions that may happen at any time (the per-server model proves Handle In-Sync
  Change raises them at exactly those numbers). Send Sync Request, raised from eight places with the
  partition's own values, may likewise happen at any time.
* The PendingChangeCollection is the network: a change queued out of order is the change still in
  flight, applied when it is received again in order (Check Pending Changes); a change that fails to
  apply (an update of an object the replica lacks) changes nothing, a stutter that preserves every
  invariant. A sync reply's changes are applied as Receive Sync Reply applies them: all at once, in
  ascending order, when its FromSeqNumber is at most LastSeqNumber.
* Directory objects are their identity and SeqNumber (no properties, no path names: E-317's name
  conflict is not modelled, nor E-263's scope restriction); a change names its object. The site
  object's PROPID_S_PSC is the name Handle Site Update takes (an assumption: :data:`.assumptions`).
* Not modelled: a server that loses all its replication state (the per-server initiation obligations
  cover its restart; old messages addressed to its name are not), the authority losing its state
  (E-262), the deletion of a site (E-318), BSC acks and MyPSCName (a BSC's requests may be answered
  by any server holding the partition, a superset of what its PSC would answer), timers.

The assumptions the proofs make that no invariant discharges are named and listed by ``mqspec prove``
(:mod:`.assumptions`), with what each per-server assumption of :mod:`mqspec.proofs.z3_events` became.
:mod:`.projection` maps a running :class:`~mqspec.refimpl.world.World` onto this model's state, and
:mod:`.evaluate` evaluates the invariants on such a state: the refinement campaign's enterprise check
(:mod:`mqspec.proofs.refinement.enterprise`) does so after each step of its scenario files.
"""
