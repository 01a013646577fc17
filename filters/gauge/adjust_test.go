package gauge

import (
	"fmt"
	"testing"
)

// The later lines of one response (Claude Code writes one a block, each
// with the response's usage) belong to the growth that response's count
// ended: their blocks are in it.
func TestCalibratorResponseLines(t *testing.T) {
	c := NewCalibrator(CharsPer4{})
	c.Add(Line{Role: Usage, Tokens: 1000, Estimate: 100}, 1)
	c.Add(Line{Role: Content, Estimate: 2000}, 2)
	for i := range 3 {
		if _, ok := c.Add(Line{Role: Usage, Tokens: 4000, Estimate: 500}, 3+i); ok {
			t.Fatalf("line %d of the response ended a growth", i+1)
		}
	}
	c.Add(Line{Role: Content, Estimate: 700}, 6)
	p, ok := c.Add(Line{Role: Usage, Tokens: 5000, Estimate: 100}, 7)
	if !ok || p.Est != 3500 || p.Real != 3000 || p.Line != 3 {
		t.Fatalf("the response's growth: %+v (%v), want 3500 estimated against 3000, ended on line 3", p, ok)
	}
	if p, ok := c.Flush(); !ok || p.Est != 800 || p.Real != 1000 {
		t.Fatalf("the last growth: %+v (%v), want 800 estimated against 1000", p, ok)
	}
}

// A worth an earlier run wrote before it had measured anything does not
// pin the worth once this run has measured more; one measured on more
// growths than this run has stands.
func TestCalibratorPrefersTheBetterMeasured(t *testing.T) {
	run := func(seen Adjustment) float64 {
		c := NewCalibrator(CharsPer4{})
		c.Add(Line{Role: Usage, Tokens: 1000, Adj: seen}, 0)
		tokens := 1000
		for range calibrationMinPairs + 1 {
			c.Add(Line{Role: Content, Estimate: 1000}, 0)
			tokens += 1500
			c.Add(Line{Role: Usage, Tokens: tokens, Adj: seen}, 0)
		}
		return c.Scale()
	}
	if s := run(Adjustment{Scale: 1, Estimator: "chars/4"}); s != 1.5 {
		t.Errorf("after an unmeasured worth of 1: %v, want the 1.5 measured here", s)
	}
	if s := run(Adjustment{Scale: 1.2, Measured: 200, Estimator: "chars/4"}); s != 1.2 {
		t.Errorf("after a worth measured on 200 growths: %v, want it (1.2)", s)
	}
}

// A subagent's line inside a roll note's scope is still a line of the
// scope, as the gauge counts them: the usage after the scope carries what
// the run took out.
func TestLedgerScopeCountsOtherThreads(t *testing.T) {
	g := NewLedger(CharsPer4{})
	main := func(l Line) LedgerLine { return LedgerLine{Line: l, thread: threadMain} }
	g.Add(main(Line{Role: Content}))
	g.Add(LedgerLine{Line: Line{Role: Compaction, Scope: 3, RollEnd: true, evicts: true}})
	g.Add(LedgerLine{Line: Line{Role: Usage, Tokens: 10}, thread: threadSidechain})
	g.Add(main(Line{Role: Content}))
	l := main(Line{Role: Content})
	l.Removed = 100
	g.Add(l) // the scope's last line
	adj, ok := g.Add(main(Line{Role: Usage, Tokens: 5000}))
	if !ok || adj.Removed != 100 {
		t.Fatalf("the usage after the scope carries %+v (%v), want 100 removed", adj, ok)
	}
}

// A reset between a pi roll's marker and its note (the copy of the
// compaction roll writes after the marker) starts what the note counts:
// never what came before it, never a negative count.
func TestLedgerResetBetweenMarkerAndNote(t *testing.T) {
	g := NewLedger(CharsPer4{})
	before := LedgerLine{Line: Line{Role: Content}, Removed: 100}
	g.Add(before)
	g.Add(LedgerLine{Line: Line{evicts: true}})
	g.Add(LedgerLine{Line: Line{Role: Compaction}})
	kept := LedgerLine{Line: Line{Role: Content}, Removed: 50}
	g.Add(kept)
	adj, ok := g.Add(LedgerLine{Line: Line{Role: Compaction, RollEnd: true}})
	if !ok || adj.Removed != 50 || adj.Added != 0 {
		t.Fatalf("the note carries %+v (%v), want the 50 taken out after the reset", adj, ok)
	}
}

// A pi user who went back to an earlier entry goes on from it: a usage on
// the new branch carries what the run took out of the entries on its path
// only, never what it took out of the branch left behind; two passes
// (Observe, then Carry) and one (Add) agree; and a run that carries only
// the lines that act (archive) gets the same.
func TestLedgerFollowsTheBranch(t *testing.T) {
	type line struct {
		id, parent string
		role       Role
		removed    int
	}
	lines := []line{
		{"a", "", Content, 0},
		{"b", "a", Content, 100}, // on the path
		{"c", "b", Usage, 0},
		{"d", "c", Content, 1000}, // the branch left behind
		{"e", "d", Usage, 0},
		{"f", "c", Content, 10}, // the user went back to c
		{"g", "f", Usage, 0},
		{"h", "e", Usage, 0}, // and back to the first branch's end
	}
	want := []int{2: 100, 4: 1100, 6: 110, 7: 1100}
	ledgerLine := func(l line) LedgerLine {
		return LedgerLine{Line: Line{Role: l.role, Tokens: 1000}, ID: l.id, Parent: l.parent, Removed: l.removed, Entry: true, Bytes: 100}
	}
	check := func(how string, got []int) {
		t.Helper()
		for i, w := range want {
			if got[i] != w {
				t.Errorf("%s: the usage at line %d carries %d removed, want %d", how, i+1, got[i], w)
			}
		}
	}

	g, got := NewLedger(CharsPer4{}), make([]int, len(lines))
	for i, l := range lines {
		if adj, ok := g.Add(ledgerLine(l)); ok {
			got[i] = adj.Removed
		}
	}
	check("one pass", got)

	g, got = NewLedger(CharsPer4{}), make([]int, len(lines))
	marks := make([]Mark, len(lines))
	for i, l := range lines {
		marks[i], _ = g.Observe(ledgerLine(l))
	}
	for i, l := range lines {
		if !marks[i].Acts() && l.removed == 0 {
			continue // passed over, as archive does
		}
		if adj, ok := g.Carry(marks[i], l.removed, 0); ok {
			got[i] = adj.Removed
		}
	}
	check("two passes", got)
}

// TestLedgerBranchWindow: past treeWindow entries the ledger keeps only
// the latest ones (newerHalf): a branch from an entry that recent still
// starts from its parent's totals, and one from further back starts from
// those of the lines before it, as in a file without branches.
func TestLedgerBranchWindow(t *testing.T) {
	g := NewLedger(CharsPer4{})
	add := func(id, parent string, role Role, removed int) int {
		t.Helper()
		adj, _ := g.Add(LedgerLine{Line: Line{Role: role, Tokens: 1000}, ID: id, Parent: parent, Removed: removed, Entry: true, Bytes: 100})
		return adj.Removed
	}
	add("root", "", Content, 0)
	add("x", "root", Content, 1000)
	parent := "x"
	for i := range treeWindow + 10 {
		id := fmt.Sprint("c", i)
		add(id, parent, Content, 0)
		parent = id
	}
	add("y", parent, Content, 50)
	if got := add("z", "y", Usage, 0); got != 1050 {
		t.Errorf("the usage on the path carries %d removed, want 1050", got)
	}
	// c60000 is older than the window's last halving, but in its newer half.
	if got := add("near", "c60000", Usage, 0); got != 1000 {
		t.Errorf("a branch from a recent entry carries %d removed, want its parent's 1000", got)
	}
	// root's own totals were 0: forgotten, so the lines before count.
	if got := add("far", "root", Usage, 0); got != 1000 {
		t.Errorf("a branch from beyond the window carries %d removed, want the 1000 of the lines before it", got)
	}
}
