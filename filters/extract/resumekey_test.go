package extract

import (
	"testing"
	"time"

	"github.com/bstools/bs/filters/rules"
	"github.com/bstools/bs/filters/transcript"
)

// TestResumeKey: the key keeps the spelling watermarks were written with,
// changes with every option the output depends on, and not with the others.
func TestResumeKey(t *testing.T) {
	base := Defaults()
	if got, want := base.ResumeKey(), "extract v1|3|500|tool_call,tool_result,thinking,bookkeeping|10m0s|%!s(<nil>)|"; got != want {
		t.Errorf("defaults' key %q, want %q", got, want)
	}
	openclaw, err := transcript.ParseDialect("openclaw")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rules.Compile([]string{"true", "false"})
	if err != nil {
		t.Fatal(err)
	}
	with := base
	with.Format, with.Rules = openclaw, rs
	if got, want := with.ResumeKey(), "extract v1|3|500|tool_call,tool_result,thinking,bookkeeping|10m0s|openclaw|true\x00false"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	for name, change := range map[string]func(*Options){
		"keep-recent":        func(o *Options) { o.KeepRecent++ },
		"min-length":         func(o *Options) { o.MinLength++ },
		"types":              func(o *Options) { o.Types = transcript.ToolResult },
		"keep-after-restore": func(o *Options) { o.KeepAfterRestore = time.Hour },
		"format":             func(o *Options) { o.Format = openclaw },
		"rule":               func(o *Options) { o.Rules = rs[:1] },
	} {
		o := base
		change(&o)
		if o.ResumeKey() == base.ResumeKey() {
			t.Errorf("%s: the key does not change", name)
		}
	}
	o := base
	o.Now, o.Workers, o.Session = time.Now(), 1, "s"
	if o.ResumeKey() != base.ResumeKey() {
		t.Error("the key changes with the clock, the workers or the session's name")
	}
}
