package retention_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/bstools/bs/filters/retention"
)

// TestReport: the counts of a run, as the report line and as JSON; a dry
// run lists its items, a real one does not.
func TestReport(t *testing.T) {
	res := retention.SweepResult{Listed: 9, Referenced: 5, Recent: 1, Bytes: 30,
		Removed: []retention.Item{{Name: "sha256:aa", Bytes: 10}, {Name: "sha256:bb", Bytes: 20}},
		Packs:   &retention.PackSweep{Deleted: 1, Freed: 100}}
	cps := []retention.Item{{Name: "cp/k/cp_001.yaml", Bytes: 7}}
	items := append(append([]retention.Item{}, res.Removed...), cps...)
	for _, dry := range []bool{true, false} {
		rep := retention.NewReport(dry, 3, res, cps, nil)
		var text, js bytes.Buffer
		rep.Write(&text, items, false)
		rep.Write(&js, items, true)
		want := "deleted: blobs 2 (30 bytes), checkpoints 1 (7 bytes), holders 0 (0 bytes); kept: blobs 5 referenced, 1 recent (of 9); sessions read: 3\n" +
			"packs: 1 deleted, 0 rewritten, 100 bytes freed; 0 unreferenced blobs (0 bytes) left in packs below --rewrite-above\n"
		if dry {
			want = "sha256:aa 10\nsha256:bb 20\ncp/k/cp_001.yaml 7\n" +
				"would delete: blobs 2 (30 bytes), checkpoints 1 (7 bytes), holders 0 (0 bytes); kept: blobs 5 referenced, 1 recent (of 9); sessions read: 3\n" +
				"packs: 1 to delete, 0 to rewrite, 100 bytes to free; 0 unreferenced blobs (0 bytes) to leave in packs below --rewrite-above\n"
		}
		if text.String() != want {
			t.Errorf("dry %v: got\n%swant\n%s", dry, text.String(), want)
		}
		var back retention.Report
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Blobs.Deleted != 2 || back.Checkpoints.Bytes != 7 || len(back.Items) != map[bool]int{true: 3, false: 0}[dry] {
			t.Errorf("dry %v: JSON %s (%v)", dry, js.String(), err)
		}
	}
}
