package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/bench/harness"
)

func init() { registerCommand(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bench [-only diff,score,pipeline,api,micro,probe] [-runs N] [-out bench/RESULTS.md]",
		Short: "Run the benchmarks of bench/ side by side with their baselines",
		Long: `bench runs the end-to-end benchmarks of bench/ (the same harness as
"go run ./bench"; see bench/README.md) on a generated registry at scale and
prints a results document, or writes it with -out.

  1. diff      two 170k-record snapshots, decode + Diff, vs Python and the Go decode floor
  2. score     a publication of 50k records (Compute + Seal) vs the SHA-256 floor
  3. pipeline  generated history through bus -> processors -> store vs the bus-only floor
  4. api       record, trust and search lookups at a fixed offered rate vs GET /healthz
  5. probe     the prober vs the go-sdk client (copied from bench/probe)
     micro     the micro benchmarks next to the hot paths

Flags are the harness's own (single dash): -dir, -servers, -runs, -only, -out,
-python, -rate, -secs, -pipeline-days, -pipeline-remotes, -pipeline-arms. The Python baseline is run from bench/baselines, so
run it from the repository root.

Example:
  forum bench -only diff -runs 1`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "--help" || a == "-h" {
					return cmd.Help()
				}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return harness.Main(ctx, args, strings.TrimSpace("forum bench "+strings.Join(args, " ")))
		},
	}
}
