package search

import (
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// Safety-hold reasons (SafetyHold.Reason).
const (
	HoldBandF              = "band_F"
	HoldOpenStrongNegative = "open_strong_negative"
	HoldBandD              = "band_D"
)

// SafetyHold is SPEC §3's safety hold as a listing shows it: the server's
// FORUM record says it must not be promoted, whatever its Toolfinder score.
// The score and the sealed record are unchanged; only the display is.
type SafetyHold struct {
	Reason        string       `json:"reason" enum:"band_F,open_strong_negative,band_D" doc:"Why the server is held: band_F, else open_strong_negative (an open strong-negative signal), else band_D."`
	Band          string       `json:"band" doc:"The FORUM band of the server's newest record."`
	BandReason    string       `json:"band_reason,omitempty" doc:"The record's own statement of why it has that band."`
	ReviewPending bool         `json:"review_pending,omitempty" doc:"The record is held for popular-server review: GET /v1/servers/{name}/trust serves the previous record until the review ends, the safety hold applies meanwhile."`
	Signals       []HeldSignal `json:"signals" doc:"The record's open signals (open_signals), strong-negative and high-severity, each with its evidence."`
}

// HeldSignal is one open signal of a held record with the evidence behind it.
type HeldSignal struct {
	SubScore string            `json:"sub_score" enum:"provenance,static,drift,incidents"`
	ID       string            `json:"id" doc:"The signal id within its sub-score, e.g. tool_poisoning/<rule>."`
	Kind     string            `json:"kind" enum:"strong_negative,high_severity"`
	Evidence []schema.Evidence `json:"evidence" doc:"Pointers to the stored observations; each uri resolves under /v1/evidence/."`
}

// SafetyHoldOf decides SPEC §3's safety hold from a sealed record; nil when
// the server is not held. The reading, in the record's own terms:
//
//   - held when band is "D" or "F", or when open_signals (the record's
//     summary of the signals that count for the band now) holds one of
//     kind strong_negative. A strong negative that closed or decayed below
//     its threshold is no longer in open_signals, so it holds nothing; an
//     open high-severity signal that is not strong-negative (band C) does
//     not hold either.
//   - Reason: band_F first (the worst band, e.g. a confirmed incident),
//     then open_strong_negative when one is open (the cause that names
//     its evidence), then band_D (a sub-score below 40 alone); BandReason
//     is the record's band_reason, so a band hold without a signal still
//     says why.
//   - Signals are all of open_signals, in the record's order, each with
//     the evidence of the matching sub-score signal; an evidence pointer
//     without a uri gets the one the API resolves it at.
//   - The newest record decides even while it is held for popular-server
//     review (ReviewPending is then set): the review guards the trust
//     record against a false drop, the hold is display only and lifts
//     with the next record that no longer calls for it.
func SafetyHoldOf(r schema.Record) *SafetyHold {
	strong := false
	for _, o := range r.OpenSignals {
		strong = strong || o.Kind == schema.DirectionStrongNegative
	}
	var reason string
	switch {
	case r.Band == trust.BandF:
		reason = HoldBandF
	case strong:
		reason = HoldOpenStrongNegative
	case r.Band == trust.BandD:
		reason = HoldBandD
	default:
		return nil
	}
	h := &SafetyHold{Reason: reason, Band: r.Band, BandReason: r.BandReason, ReviewPending: r.ReviewPending != nil,
		Signals: make([]HeldSignal, 0, len(r.OpenSignals))}
	subs := map[string]*trust.SubScore{"provenance": &r.Provenance, "static": &r.Static, "drift": &r.Drift, "incidents": &r.Incidents}
	for _, o := range r.OpenSignals {
		s := HeldSignal{SubScore: o.SubScore, ID: o.ID, Kind: o.Kind, Evidence: []schema.Evidence{}}
		if sub := subs[o.SubScore]; sub != nil {
			for _, sg := range sub.Signals {
				if sg.ID != o.ID {
					continue
				}
				for _, e := range sg.Evidence {
					if e.URI == "" {
						e.URI = schema.EvidenceURI(e.ID)
					}
					s.Evidence = append(s.Evidence, e)
				}
				break
			}
		}
		h.Signals = append(h.Signals, s)
	}
	return h
}
