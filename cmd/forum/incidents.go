package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/sql/store"
)

func newIncidentsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "incidents",
		Short: "Curated incidents: load a file of them",
		Long: `incidents manages the curated incident feed (SPEC §1.5). Incidents are also
entered one by one through the admin API (POST /v1/admin/incidents, bearer token
from FORUM_ADMIN_TOKEN).`,
	}
	cmd.AddCommand(newIncidentsLoadCmd())
	return cmd
}

// fileLookup validates a file against the store, and against the lines of
// the same file accepted before (a file may not enter an id twice).
type fileLookup struct {
	base     incidents.StoreLookup
	accepted map[string]incidents.Record
}

func (l *fileLookup) ServerExists(ctx context.Context, s string) (bool, error) {
	return l.base.ServerExists(ctx, s)
}

func (l *fileLookup) Incident(ctx context.Context, id string) (incidents.Record, bool, error) {
	if r, ok := l.accepted[id]; ok {
		return r, true, nil
	}
	return l.base.Incident(ctx, id)
}

// validateFile reads JSON lines of incidents.Input and validates every line.
// It returns the messages only when every line is valid.
func validateFile(ctx context.Context, path, who, defaultReason string, now time.Time, lk incidents.StoreLookup) ([]incidents.Msg, []string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	fl := &fileLookup{base: lk, accepted: map[string]incidents.Record{}}
	var msgs []incidents.Msg
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		var in incidents.Input
		dec := json.NewDecoder(strings.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: not an incident object: %v", path, line, err))
			continue
		}
		if in.Reason == "" {
			in.Reason = defaultReason
		}
		m, err := incidents.ValidateInsert(ctx, in, who, now, fl)
		if err != nil {
			var ie *incidents.InvalidError
			if !errors.As(err, &ie) {
				return nil, nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			problems = append(problems, fmt.Sprintf("%s:%d: %v", path, line, err))
			continue
		}
		fl.accepted[m.Incident.ID] = m.Incident
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(problems) > 0 {
		return nil, problems, nil
	}
	return msgs, nil, nil
}

func newIncidentsLoadCmd() *cobra.Command {
	cfg := &config{}
	var who, reason string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "load FILE",
		Short: "Validate a JSON-lines file of incidents and publish them all, or none",
		Long: `load reads one incident per line:

  {"server":"io.github.acme/tool","date":"2025-10-01T00:00:00Z","class":"rug_pull",
   "severity":"high","status":"confirmed","source_uri":"https://…","note":"…","reason":"…"}

(id and curator are optional; blank lines and lines starting with # are
skipped). Every line is validated first — server in the store's latest view,
date not in the future, a source URI, a known class, severity and status, a
reason (per line or --reason) — and if any line is bad, every problem is
printed and nothing is published (exit status 1). Otherwise all are published
on the incidents topic with an audit entry naming --who; the incidents
processor of 'forum run' / 'forum process' stores them.

With the embedded defaults this opens the DuckDB file and the broker under
--data-dir, so run it while no other forum process uses that directory.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(who) == "" {
				return usageError{errors.New("--who is required: it is recorded in the audit log")}
			}
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore)
			if err != nil {
				return err
			}
			defer a.close()
			is, ok := a.store.(store.IncidentStore)
			if !ok {
				return fmt.Errorf("the store %T keeps no incidents", a.store)
			}
			msgs, problems, err := validateFile(ctx, args[0], who, reason, time.Now(), incidents.StoreLookup{Servers: a.store, Incidents: is})
			if err != nil {
				return err
			}
			if len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(os.Stderr, p)
				}
				return fmt.Errorf("%d bad line(s); nothing was published", len(problems))
			}
			if dryRun {
				fmt.Fprintf(os.Stderr, "%d incident(s) valid; --dry-run: nothing published\n", len(msgs))
				return nil
			}
			if err := a.openBus(ctx); err != nil {
				return err
			}
			w := bus.NewWriter(a.brokers, a.log)
			defer w.Close()
			if err := (&incidents.Publisher{W: w}).Publish(ctx, msgs...); err != nil {
				return err
			}
			for _, m := range msgs {
				fmt.Printf("%s\t%s\t%s\t%s\n", m.Incident.ID, m.Incident.Server, m.Incident.Class, m.Incident.Status)
			}
			fmt.Fprintf(os.Stderr, "published %d incident(s) on %s\n", len(msgs), incidents.Topic)
			return nil
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&who, "who", "", "who is loading (recorded in the audit log; required)")
	cmd.Flags().StringVar(&reason, "reason", "", "reason recorded for lines that carry none")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate only")
	return cmd
}
