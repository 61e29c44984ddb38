package erc8004

import (
	"errors"
	"math"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }

func TestOnChainScore(t *testing.T) {
	for _, tc := range []struct {
		in      float64
		want    uint8
		refused bool
	}{
		{0, 0, false}, {100, 100, false}, {89.4, 89, false}, {89.5, 90, false}, {99.6, 100, false}, {-0.4, 0, false},
		{100.5, 0, true}, {150, 0, true}, {256, 0, true}, {-1, 0, true}, {math.NaN(), 0, true}, {math.Inf(1), 0, true},
	} {
		got, err := OnChainScore(tc.in)
		var r *Refusal
		if tc.refused {
			if !errors.As(err, &r) || r.Reason != ReasonScoreRange || !errors.Is(err, ErrRefused) {
				t.Errorf("OnChainScore(%v) = %d, %v; want a score_out_of_range refusal", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("OnChainScore(%v) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	t0 := time.Date(2025, 10, 1, 20, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	last := &Last{Score: 90, Band: "B", At: t0}
	for _, tc := range []struct {
		name string
		prev *Last
		c    Candidate
		want string
	}{
		{"first feedback of a server", nil, Candidate{Score: f64(90), Band: "B", ComputedAt: t0}, Send},
		{"no score", nil, Candidate{Band: "C", ComputedAt: t0}, NoScore},
		{"same rounded score and band (hourly republication)", last, Candidate{Score: f64(90.3), Band: "B", ComputedAt: t0.Add(time.Hour)}, Unchanged},
		{"same score a week later", last, Candidate{Score: f64(90), Band: "B", ComputedAt: t0.Add(7 * day)}, Unchanged},
		{"score changed within a day", last, Candidate{Score: f64(80), Band: "B", ComputedAt: t0.Add(23 * time.Hour)}, TooSoon},
		{"band changed within a day", last, Candidate{Score: f64(90), Band: "D", ComputedAt: t0.Add(time.Hour)}, TooSoon},
		{"score changed a day later", last, Candidate{Score: f64(80), Band: "B", ComputedAt: t0.Add(day)}, Send},
		{"band changed a day later", last, Candidate{Score: f64(90), Band: "D", ComputedAt: t0.Add(2 * day)}, Send},
		{"older than the last feedback (a rerun)", last, Candidate{Score: f64(10), Band: "F", ComputedAt: t0.Add(-day)}, Stale},
		{"band unknown (state from the chain): score only", &Last{Score: 90}, Candidate{Score: f64(90), Band: "A", ComputedAt: t0}, Unchanged},
		{"band unknown, score changed, no time known", &Last{Score: 90}, Candidate{Score: f64(70), Band: "A", ComputedAt: t0}, Send},
	} {
		got, _, err := Decide(tc.prev, tc.c, day)
		if err != nil || got != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	if _, _, err := Decide(last, Candidate{Score: f64(101), Band: "A", ComputedAt: t0.Add(2 * day)}, day); !errors.Is(err, ErrRefused) {
		t.Errorf("a score of 101 must be refused, got %v", err)
	}
}
