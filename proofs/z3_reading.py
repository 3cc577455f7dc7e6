"""Which reading of the text the model executes, and which of refimpl's clarifications it models.

The model branches on register entries exactly where refimpl branches on ``ctx.clarified``, for
the handlers it covers (:data:`ERRATA`); :data:`NOT_MODELLED` says why the other branches are
left out, :data:`READ_ONE_WAY` lists what the handlers cite without a branch. The anti-drift test
fails when the handlers cite an id none of the three lists.
"""

from __future__ import annotations

#: the refimpl branches on ``ctx.clarified`` the model leaves out, and why (the anti-drift test
#: requires every register id the MC-MQDSRP handlers cite to be in ERRATA, here or in READ_ONE_WAY)
NOT_MODELLED = {
    "E-100": "the post-event statuses are MQ_OK for every modelled change (queues), so both readings agree",
    "E-101": "how a change request names its object; the model's requests apply or not (``applies``)",
    "E-104": "site and BSC neighbor creation (partitions and neighbors are not modelled)",
    "E-105": "the PSC neighbor's PartitionID (neighbors are not modelled beyond their acks)",
    "E-106": "BSCs acquiring PSC neighbors (neighbor membership is checked by bounded model checking)",
    "E-336": ("a site created without PROPID_S_PSC (site partitions, PSC neighbors and server names are not "
              "modelled); the refinement campaign's a-site-created-with-no-psc.yaml runs it in both modes"),
    "E-112": "GUIDs of created objects (the model's changes name their objects)",
    "E-114": "site partitions learned from sync changes (one partition is modelled)",
    "E-124": "property values of sync changes",
    "E-125": "change-reply correlation (Process Change Request's wait)",
    "E-137": "SeqNumberHeader timing (the header's content is an argument of the model)",
    "E-139": "the object type of a synchronize change",
    "E-162": "following a site's new PSC (AuthorityName is not modelled)",
    "E-165": "where a change reply goes",
    "E-312": "a BSC's MyPSCName (one partition is modelled, and no server names)",
    "E-316": ("a BSC's MyPSCName in SYNC0 (the model has no server names and no PSC moves); the convergence it "
              "restores is checked by the explorer (replicas_converge_at_quiescence) and by "
              "scenarios/e316-bsc-in-sync0-follows-its-moved-psc.yaml"),
    "E-317": ("object names and the sync0 reset's marks (the model's changes name their objects by identity and "
              "it has no path names); the invariants it restores, purged_seq_at_most_last_seq and "
              "no_incremental_history_skips_purged_deletion, are checked by the explorer and by "
              "scenarios/e317-sync0-create-takes-a-name-the-reset-marked.yaml"),
    "E-318": ("which partitions and PSC neighbors a server keeps after a site's deletion (site partitions and "
              "neighbors are not modelled); the purge it restores is checked by "
              "scenarios/e318-a-deleted-sites-psc-neighbor-goes-at-every-psc.yaml"),
    "E-315": ("a server named the new PSC of its own site (the model's authority is fixed: no PSC moves); the "
              "single-authority property it restores is checked by the explorer (one_authority_per_partition) "
              "and by scenarios/e315-new-psc-knew-its-site-before-the-move.yaml"),
    "E-263": ("which queues a sync reply carries (Lookup Directory Objects' PROPID_Q_SCOPE restriction): the "
              "model's directory objects have no scope, and the single-server invariants say nothing of which "
              "objects a reply holds, only of its deletions (tombstones), which the restriction never touches; the "
              "lost update is a convergence property, checked by bounded model checking "
              "(replicas_converge_at_quiescence-by-bmc, schedule 'update C0\\z at PSC1; drop next propagation "
              "PEC0 to PSC1') and by scenarios/counterexamples/e263-site-scoped-queue-update-lost-by-sync.yaml"),
}
#: ids the handlers cite where both modes read the same (no branch): nothing to model twice
READ_ONE_WAY = ("E-002", "E-055", "E-102", "E-107", "E-109", "E-110", "E-111", "E-113", "E-115", "E-120", "E-122",
                "E-123", "E-126", "E-127", "E-128", "E-129", "E-132", "E-134", "E-135", "E-160", "E-161", "E-163",
                "E-164", "E-180", "E-181", "E-182", "E-183", "E-189", "E-310")

#: the register entries whose clarified reading the model implements (each branches here as in refimpl)
ERRATA = ("E-103", "E-108", "E-116", "E-117", "E-118", "E-119", "E-130", "E-131", "E-133", "E-136", "E-166",
          "E-261", "E-264", "E-311", "E-314")


class Reading:
    """Which reading of the text the model executes: ``Reading.clarified()``, ``Reading.literal()``, or
    the literal text except for some entries (``Reading(literal=...)``), which is how a counterexample
    finds the entries it depends on. ``reading("E-108")`` is true where E-108's clarification applies.
    """

    __slots__ = ("literal_ids",)

    def __init__(self, literal: frozenset[str] = frozenset()) -> None:
        self.literal_ids = frozenset(literal)

    @classmethod
    def clarified(cls) -> Reading:
        return cls(frozenset())

    @classmethod
    def literal(cls) -> Reading:
        return cls(frozenset(ERRATA))

    @classmethod
    def of(cls, mode: str | bool | Reading) -> Reading:
        if isinstance(mode, Reading):
            return mode
        clar = mode if isinstance(mode, bool) else mode == "clarified"
        return cls.clarified() if clar else cls.literal()

    def __call__(self, erratum: str) -> bool:
        return erratum not in self.literal_ids

    def __repr__(self) -> str:
        return f"Reading(literal={sorted(self.literal_ids)})"
