// Package docs holds bs's documentation in depth, one file per command
// (commands/) and per topic, which the man pages carry too: cmd/bs reads
// it from here when it makes them (scripts/genman). Each command's
// description and examples, which its --help shows too, are here as well.
package docs

import "embed"

// Files are the Markdown files of this folder: commands/*.md and the
// topics (live sessions, object storage, agents, performance).
//
//go:embed *.md commands/*.md
var Files embed.FS
