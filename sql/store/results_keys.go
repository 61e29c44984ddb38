package store

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The keys of the ResultStore tables, defined once for every engine. Keys
// hold times at the millisecond every engine stores, so two writes whose
// as_of differ below the millisecond are one row, as the engines see them.
// A batch is reduced with these before it is written (the last row of a key
// wins), as the engines do across batches.

func msKey(t time.Time) string { return strconv.FormatInt(Millis(t).UnixMilli(), 10) }

// ReduceDriftStates keeps the last row of each (server, as_of).
func ReduceDriftStates(rows []DriftStateRow) []DriftStateRow {
	return LastByID(rows, func(r DriftStateRow) string { return r.Server + "\x00" + msKey(r.AsOf) })
}

// ReduceIncidentStates keeps the last row of each (server, as_of).
func ReduceIncidentStates(rows []IncidentStateRow) []IncidentStateRow {
	return LastByID(rows, func(r IncidentStateRow) string { return r.Server + "\x00" + msKey(r.AsOf) })
}

// ReduceOwnerBursts keeps the last row of each (namespace, day, as_of).
func ReduceOwnerBursts(rows []OwnerBurstRow) []OwnerBurstRow {
	return LastByID(rows, func(r OwnerBurstRow) string { return r.Namespace + "\x00" + r.Day + "\x00" + msKey(r.AsOf) })
}

// ReduceProvenanceSignals keeps the last row of each (server, as_of).
func ReduceProvenanceSignals(rows []ProvenanceSignalRow) []ProvenanceSignalRow {
	return LastByID(rows, func(r ProvenanceSignalRow) string { return r.Server + "\x00" + msKey(r.AsOf) })
}

// ReduceBaseRates keeps the last row of each (flag, as_of).
func ReduceBaseRates(rows []BaseRateRow) []BaseRateRow {
	return LastByID(rows, func(r BaseRateRow) string { return r.Flag + "\x00" + msKey(r.AsOf) })
}

// ReduceGates keeps the last row of each as_of.
func ReduceGates(rows []GateRow) []GateRow {
	return LastByID(rows, func(r GateRow) string { return msKey(r.AsOf) })
}

// ReduceRegistryLoads keeps the last row of each snapshot id.
func ReduceRegistryLoads(rows []RegistryLoad) []RegistryLoad {
	return LastByID(rows, func(r RegistryLoad) string { return r.SnapshotID })
}

// The days owner_bursts can hold: ClickHouse's Date range (DuckDB's DATE
// is wider; keeping to the narrower one keeps both engines storing and
// comparing the same days, where ClickHouse would wrap silently).
const (
	MinDay = "1970-01-01"
	MaxDay = "2105-12-31"
)

// ErrDayOutOfRange is returned for a day outside MinDay..MaxDay.
var ErrDayOutOfRange = errors.New("day out of range " + MinDay + ".." + MaxDay)

// ParseDay parses a UTC day as owner_bursts stores it (YYYY-MM-DD): the
// day column is a DATE on every engine, so a malformed day is refused
// before it reaches one.
func ParseDay(day string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return time.Time{}, fmt.Errorf("day %q is not YYYY-MM-DD: %w", day, err)
	}
	if day < MinDay || day > MaxDay {
		return time.Time{}, fmt.Errorf("day %q: %w", day, ErrDayOutOfRange)
	}
	return t, nil
}

// CheckOwnerBursts checks the days of rows before a write.
func CheckOwnerBursts(rows []OwnerBurstRow) error {
	for _, r := range rows {
		if _, err := ParseDay(r.Day); err != nil {
			return fmt.Errorf("owner burst of %q: %w", r.Namespace, err)
		}
	}
	return nil
}

// CheckOwnerBurstQuery checks the days of q (either may be empty).
func CheckOwnerBurstQuery(q OwnerBurstQuery) error {
	for _, d := range []string{q.From, q.To} {
		if d == "" {
			continue
		}
		if _, err := ParseDay(d); err != nil {
			return fmt.Errorf("owner bursts query: %w", err)
		}
	}
	return nil
}
