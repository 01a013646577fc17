package gauge

import (
	"fmt"
	"io"
	"math"

	"github.com/bstools/bs/filters/transcript"
)

// Calibration compares the estimator with what the provider reported:
// for each pair of consecutive usage readings with no compaction between
// them, the real growth of the context against the estimate of the lines
// that made it grow (counting back in what bs has taken out of them).
// Scale is what one estimated token is worth in the provider's tokens, as
// the filters count what they take out of the context (Calibrator).
type Calibration struct {
	Pairs          int     `json:"pairs"`
	MeanAbsError   float64 `json:"mean_abs_error"`   // mean of |estimate-real|/real
	WorstError     float64 `json:"worst_error"`      // the largest |estimate-real|/real, signed
	WorstLine      int     `json:"worst_line"`       // the usage line where it happened
	TotalError     float64 `json:"total_error"`      // (summed estimates - summed growth) / summed growth
	RealTokens     int     `json:"real_tokens"`      // summed real growth
	EstimateTokens int     `json:"estimated_tokens"` // summed estimates
	Scale          float64 `json:"scale"`
	Estimator      string  `json:"estimator"`
}

// String is the calibration as bs gauge --calibrate prints it.
func (c Calibration) String() string {
	return fmt.Sprintf("[Calibration: %s over %d turns | overall %+.0f%% | per turn: mean %.0f%%, worst %+.0f%% at line %d]",
		c.Estimator, c.Pairs, 100*c.TotalError, 100*c.MeanAbsError, 100*c.WorstError, c.WorstLine)
}

// Calibrate reads a transcript and measures the estimator against usage.
func Calibrate(name string, r io.Reader, opt Options) (Calibration, error) {
	opt = withDefaults(opt)
	c := Calibration{Estimator: opt.Estimator.Name()}
	src := transcript.NewSource(name, r, opt.Format, opt.OnBadLine)
	cal := NewCalibrator(opt.Estimator)
	sum := 0.0
	take := func(p Pair, ok bool) {
		if !ok || p.Est < 0 {
			return
		}
		e := float64(p.Est-p.Real) / float64(p.Real)
		c.Pairs++
		sum += math.Abs(e)
		c.RealTokens += p.Real
		c.EstimateTokens += p.Est
		if math.Abs(e) > math.Abs(c.WorstError) {
			c.WorstError, c.WorstLine = e, p.Line
		}
	}
	for {
		line, t, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c, err
		}
		l := Line{}
		if t != nil {
			l = Classify(t, src.Dialect(), opt.Estimator)
		}
		take(cal.Add(l, line.Num))
	}
	take(cal.Flush())
	if c.Pairs > 0 {
		c.MeanAbsError = sum / float64(c.Pairs)
		c.TotalError = float64(c.EstimateTokens-c.RealTokens) / float64(c.RealTokens)
	}
	c.Scale = cal.Scale()
	return c, nil
}
