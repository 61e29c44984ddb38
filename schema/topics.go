package schema

// Topic names. One constant per topic so a typo is a compile error.
const (
	// Inputs and raw observations.
	TopicRegistryRecords   = "registry.records"
	TopicRegistryDiffs     = "registry.diffs"
	TopicRegistrySnapshots = "registry.snapshots"
	TopicProbeRequests     = "probe.requests"
	TopicHealthChecks      = "health.checks"
	TopicProvenanceObs     = "provenance.obs"
	TopicIncidents         = "incidents"
	TopicDLQ               = "dlq"

	// What the processors conclude (compacted: the latest value per key is
	// the state; the history sinks keep every value).
	TopicDriftState        = "drift.state"
	TopicIncidentState     = "incidents.state"
	TopicOwnerBursts       = "ownerburst.windows"
	TopicProvenanceSignals = "provenance.signals"
	TopicProvenanceRates   = "provenance.rates"
	TopicTrustRecords      = "trust.records"
	TopicTrustPublications = "trust.publications"
)

// Cleanup policies.
const (
	CleanupDelete  = "delete"  // a stream: old segments expire with the broker's retention
	CleanupCompact = "compact" // a table: the latest value of every key is kept forever
)

// Topic is one row of the topic table: everything a producer, a consumer or
// an operator needs to know about a topic, and what EnsureTopics creates.
type Topic struct {
	Name string
	// Partitions is the fixed count, or 0 for the process' configured
	// default (--partitions). 1 where consumers need one total order.
	Partitions int
	Key        string // what the message key is
	Cleanup    string // CleanupDelete or CleanupCompact
	// Forever keeps a delete-policy topic's messages without a time limit
	// (retention.ms=-1): the input cannot be fetched again from anywhere.
	Forever bool
	Value   string // the Go type of the value (JSON)
	From    string // who writes
	To      string // who reads
}

// Topics is the topic table: every topic the pipeline uses, in creation
// order. bus.EnsureTopics creates them from it (compacted topics with
// min.compaction.lag.ms of a week, so a sink that is days behind still
// reads every value before compaction could drop it).
var Topics = []Topic{
	{Name: TopicRegistryRecords, Partitions: 1, Key: "server name", Cleanup: CleanupDelete, Value: "RecordMsg",
		From: "registry crawler, replay", To: "differ, registry sink"},
	{Name: TopicRegistryDiffs, Key: "server name", Cleanup: CleanupDelete, Value: "DriftEvent",
		From: "differ", To: "drift, owner-burst, drift-events sink"},
	{Name: TopicRegistrySnapshots, Partitions: 1, Key: "snapshot id", Cleanup: CleanupDelete, Value: "SnapshotSummary",
		From: "differ", To: "drift, owner-burst, provenance, scorer, snapshots sink"},
	{Name: TopicProbeRequests, Key: "server name", Cleanup: CleanupDelete, Value: "ProbeRequest",
		From: "probe scheduler", To: "probers (one consumer group)"},
	{Name: TopicHealthChecks, Key: "server name", Cleanup: CleanupDelete, Value: "HealthCheck",
		From: "probers", To: "health sink"},
	{Name: TopicProvenanceObs, Key: "repository (github.com/owner/name)", Cleanup: CleanupDelete, Value: "GitHubObservation",
		From: "GitHub crawler", To: "provenance, provenance sink"},
	{Name: TopicIncidents, Key: "server name", Cleanup: CleanupDelete, Forever: true, Value: "IncidentMsg",
		From: "incident admin API, forum incidents load", To: "incidents, incidents sink"},
	{Name: TopicDLQ, Key: "the bad message's key", Cleanup: CleanupDelete, Value: "DLQMessage",
		From: "every stage", To: "dlq sink"},

	{Name: TopicDriftState, Key: "server name", Cleanup: CleanupCompact, Value: "DriftState",
		From: "drift", To: "scorer, drift sink"},
	{Name: TopicIncidentState, Key: "server name", Cleanup: CleanupCompact, Value: "IncidentState",
		From: "incidents", To: "scorer, incident-state sink"},
	{Name: TopicOwnerBursts, Key: "namespace|day (UTC date)", Cleanup: CleanupCompact, Value: "OwnerBurstWindow",
		From: "owner-burst", To: "scorer, owner-burst sink"},
	{Name: TopicProvenanceSignals, Key: "server name", Cleanup: CleanupCompact, Value: "ProvenanceSignal",
		From: "provenance", To: "scorer, provenance-signals sink"},
	{Name: TopicProvenanceRates, Partitions: 1, Key: "flag name (gate: \"\")", Cleanup: CleanupCompact, Value: "BaseRate",
		From: "provenance", To: "base-rates sink"},
	{Name: TopicTrustRecords, Key: "server name", Cleanup: CleanupCompact, Value: "TrustRecordMsg",
		From: "scorer", To: "trust sink"},
	{Name: TopicTrustPublications, Partitions: 1, Key: "publication id", Cleanup: CleanupCompact, Value: "PublicationMsg",
		From: "scorer", To: "publications sink"},
}

// LookupTopic returns the row of a topic.
func LookupTopic(name string) (Topic, bool) {
	for _, t := range Topics {
		if t.Name == name {
			return t, true
		}
	}
	return Topic{}, false
}

// TopicNames returns every topic's name, in table order.
func TopicNames() []string {
	out := make([]string, len(Topics))
	for i, t := range Topics {
		out[i] = t.Name
	}
	return out
}
