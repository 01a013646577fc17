package docs

import "github.com/bstools/bs/internal/clidoc"

// What the man pages carry besides the command definitions and the
// examples (see internal/clidoc, which makes them).

// Synopsis is bs(1)'s SYNOPSIS, in roff.
const Synopsis = ".B bs\n[\\fB\\-\\-config\\fR \\fIFILE\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR...]\n.br\n.B bs \\-\\-version\n"

// Note is what bs(1) says of how a command line is read, in roff.
const Note = "Options go before the file names: a flag after a file name is a usage error. A file whose name starts with a dash is ./\\-name; \\- is standard input.\n"

// Places are where bs reads and writes, for the man pages' FILES.
var Places = []clidoc.Item{
	{Name: "$XDG_DATA_HOME/bs (~/.local/share/bs)", What: "the blob store, unless --store or BS_STORE names another"},
	{Name: "$XDG_STATE_HOME/bs/index.db (~/.local/state/bs)", What: "the search index, and beside it the rows queued for it"},
	{Name: "$XDG_STATE_HOME/bs/checkpoints", What: "checkpoints, one directory per session key"},
	{Name: "$XDG_STATE_HOME/bs/locks", What: "the locks bs takes while it rewrites a file in place"},
	{Name: "$XDG_CONFIG_HOME/bs/config.yaml (~/.config/bs/config.yaml)", What: "the configuration file: flag values by command (see bs-config(1))"},
}

// Environment is what every command reads from the environment, besides
// its flags' variables, for the man pages' ENVIRONMENT.
var Environment = []clidoc.Item{
	{Name: "BS_CONFIG", What: "the configuration file, as --config"},
	{Name: "XDG_DATA_HOME, XDG_STATE_HOME, XDG_CONFIG_HOME", What: "where the store, the index, checkpoints, locks and the configuration file are (see FILES)"},
	{Name: "NO_COLOR, TERM", What: "no colour when NO_COLOR is set or TERM is dumb; progress is drawn only when standard error is a terminal"},
	{Name: "GOGC, GOMEMLIMIT", What: "the Go garbage collector's settings: either replaces the headroom bs gives a small live heap (16 MiB), and GOMEMLIMIT also the soft limit a huge line sets (64 MiB beside it)"},
}

// Pages are the files of this folder each command's man page carries
// after its description: the depth the README leaves to them.
var Pages = map[string][]string{
	"extract":         {"commands/extract.md"},
	"restore":         {"commands/restore.md"},
	"gauge":           {"commands/gauge.md"},
	"stats":           {"commands/stats.md"},
	"roll":            {"commands/roll.md"},
	"trim":            {"commands/trim.md"},
	"archive":         {"commands/archive.md"},
	"checkpoint":      {"commands/checkpoint.md"},
	"search":          {"commands/search.md"},
	"index":           {"commands/search.md"},
	"store":           {"commands/store.md", "object-storage.md"},
	"prune-retention": {"commands/prune-retention.md"},
	"ui":              {"commands/ui.md"},
	"config":          {"commands/config.md"},
	"watch":           {"live-sessions.md"},
	"mcp":             {"agents.md"},
	"tool":            {"agents.md"},
	"skill":           {"agents.md"},
}
