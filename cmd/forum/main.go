// Command forum scores every server in the official MCP Registry for trust
// and quality. One binary, one subcommand per role:
//
//	forum run       all roles in one process (embedded broker + DuckDB by default)
//	forum replay    the same pipeline fed from snapshot files, then a summary
//	forum diff      drift events between two snapshot files, as JSON lines
//	forum ingest    a source alone: crawler, probe scheduler, prober, GitHub crawler, replay (at scale)
//	forum probe     one MCP handshake against one URL, printed as JSON
//	forum process   the processors and sinks alone (at scale)
//	forum serve     the API alone, stateless over the store (at scale: many replicas)
//	forum migrate   create or upgrade the store's tables
//	forum sql       read-only SQL against the store
//	forum validate  the drift engine's self-test on a snapshot
//	forum openapi   print the OpenAPI document
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	root.SetArgs(sqlArgs(os.Args[1:]))
	if err := root.ExecuteContext(ctx); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "forum:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "forum:", err)
		os.Exit(1)
	}
}

// The long-running commands pick their components from internal/component
// (internal/component/all imports them); the rest are tools over the store, the bus
// or files.

// usageError marks errors caused by how the command was called (exit 2).
type usageError struct{ error }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "forum",
		Short: "Trust and quality records for every server in the official MCP Registry",
		Long: `forum crawls the official MCP Registry, diffs its snapshots into drift events,
probes every remote's MCP handshake, and publishes one signed, hash-committed
trust record per server (Toolfinder v0.3 score and FORUM v0.1 trust record).
History lives in DuckDB (embedded) or ClickHouse (at scale) and is served
through an OpenAPI 3.1 API. Stages talk over Kafka topics: an embedded
Kafka-protocol broker by default, any Kafka >= 3 with --kafka-brokers.

Start here:
  forum replay --snapshots ingest/registry/testdata/snapshots   # offline, real data
  forum run                                                     # live registry, API on :8080`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newReplayCmd(), newDiffCmd(), newIngestCmd(), newProcessCmd(), newServeCmd(),
		newMigrateCmd(), newSQLCmd(), newValidateCmd(), newOpenAPICmd(), newProbeCmd(), newGitHubCmd(),
		newIncidentsCmd(), newBurstsCmd(), newCalibrateCmd(), newExportCmd(), newExportPublicationCmd(), newVerifyCmd(),
		newERC8004Cmd())
	return root
}

// Unwrap lets errors.Is see through a usage error.
func (u usageError) Unwrap() error { return u.error }
