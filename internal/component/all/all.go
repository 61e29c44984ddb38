// Package all registers every component of the pipeline, each from its own
// package (internal/component): importing it for effect is how the forum
// binary — and tests that need the component list, such as the fault tests'
// lag reading — get the whole pipeline. A new component is one line here.
package all

import (
	_ "github.com/forum-mcp/forum/api"                   // api (serve)
	_ "github.com/forum-mcp/forum/ingest/differ"         // differ (process)
	_ "github.com/forum-mcp/forum/ingest/github"         // github (source)
	_ "github.com/forum-mcp/forum/ingest/probe"          // probe-scheduler, prober (source)
	_ "github.com/forum-mcp/forum/ingest/registry"       // registry (source)
	_ "github.com/forum-mcp/forum/processors/drift"      // drift (process)
	_ "github.com/forum-mcp/forum/processors/erc8004"    // erc8004 (process; off unless configured)
	_ "github.com/forum-mcp/forum/processors/history"    // history, results, publications sinks (process)
	_ "github.com/forum-mcp/forum/processors/incidents"  // incidents (process)
	_ "github.com/forum-mcp/forum/processors/ownerburst" // ownerburst (process)
	_ "github.com/forum-mcp/forum/processors/provenance" // provenance (process)
	_ "github.com/forum-mcp/forum/processors/scorer"     // scorer (process)
)
