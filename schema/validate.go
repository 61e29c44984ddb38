package schema

// Validate methods of the registry, probe and dead-letter wire types (the
// output types validate in outputs.go, GitHub observations in github.go,
// incidents in incidents.go). Each checks only what a consumer relies on,
// from the message alone.

// Validate checks a registry.records message.
func (r *RecordMsg) Validate() error {
	switch {
	case r.SnapshotID == "":
		return Invalid(ReasonMissingField, "record message without a snapshot_id")
	case r.ObservedAt.IsZero():
		return Invalid(ReasonMissingField, "record message of snapshot %s without observed_at", Bound(r.SnapshotID, 200))
	case r.Mode != ModeFull && r.Mode != ModeIncremental:
		return Invalid(ReasonInvalidValue, "record message of snapshot %s: mode %q", Bound(r.SnapshotID, 200), Bound(r.Mode, 50))
	}
	switch r.Type {
	case MsgRecord:
		if r.Entry == nil {
			return Invalid(ReasonMissingField, "record message without an entry")
		}
		if r.Entry.Server.Name == "" {
			return Invalid(ReasonMissingName, "record message whose entry has no server.name")
		}
	case MsgSnapshotEnd:
		if r.End == nil {
			return Invalid(ReasonMissingField, "snapshot_end message without its end block")
		}
	default:
		return Invalid(ReasonUnknownKind, "record message type %q", Bound(r.Type, 50))
	}
	return nil
}

// Validate checks a drift event.
func (e *DriftEvent) Validate() error {
	switch {
	case e.ID == "":
		return Invalid(ReasonMissingField, "drift event without an id")
	case e.Server == "":
		return Invalid(ReasonMissingName, "drift event %s without a server", Bound(e.ID, 100))
	case e.ObservedAt.IsZero():
		return Invalid(ReasonMissingField, "drift event %s without observed_at", Bound(e.ID, 100))
	}
	for _, k := range EventKinds {
		if e.Kind == k {
			return nil
		}
	}
	return Invalid(ReasonUnknownKind, "drift event %s: kind %q", Bound(e.ID, 100), Bound(e.Kind, 50))
}

// Validate checks a snapshot summary.
func (s *SnapshotSummary) Validate() error {
	switch {
	case s.ID == "":
		return Invalid(ReasonMissingField, "snapshot summary without an id")
	case s.ObservedAt.IsZero():
		return Invalid(ReasonMissingField, "snapshot summary %s without observed_at", Bound(s.ID, 200))
	case s.Mode != ModeFull && s.Mode != ModeIncremental:
		return Invalid(ReasonInvalidValue, "snapshot summary %s: mode %q", Bound(s.ID, 200), Bound(s.Mode, 50))
	case s.Events < 0 || s.Entries < 0 || s.Names < 0:
		return Invalid(ReasonInvalidValue, "snapshot summary %s: negative counts", Bound(s.ID, 200))
	}
	return nil
}

// Validate checks a dead letter.
func (d *DLQMessage) Validate() error {
	if d.ID == "" || d.Stage == "" || d.Reason == "" {
		return Invalid(ReasonMissingField, "dead letter without an id, stage or reason")
	}
	return nil
}

// Validate checks a probe request.
func (r *ProbeRequest) Validate() error {
	switch {
	case r.Server == "":
		return Invalid(ReasonMissingName, "probe request without a server")
	case r.URL == "":
		return Invalid(ReasonMissingField, "probe request of %s without a url", Bound(r.Server, 200))
	}
	return nil
}

// Validate checks a health check.
func (c *HealthCheck) Validate() error {
	switch {
	case c.ID == "":
		return Invalid(ReasonMissingField, "health check without an id")
	case c.Server == "":
		return Invalid(ReasonMissingName, "health check %s without a server", Bound(c.ID, 100))
	case c.RemoteURL == "":
		return Invalid(ReasonMissingField, "health check %s without a remote_url", Bound(c.ID, 100))
	case c.ObservedAt.IsZero():
		return Invalid(ReasonMissingField, "health check %s without observed_at", Bound(c.ID, 100))
	}
	switch c.Outcome {
	case OutcomeOK, OutcomeAuthRequired, OutcomeHandshakeFailed, OutcomeUnreachable, OutcomeRateLimited, OutcomeNotChecked:
		return nil
	}
	return Invalid(ReasonInvalidValue, "health check %s: outcome %q", Bound(c.ID, 100), Bound(string(c.Outcome), 50))
}
