package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/gauge"
)

func gaugeCommand() *cli.Command {
	return &cli.Command{
		Name:      "gauge",
		Usage:     "report how full the context window is: [Context: 81% | 162k/200k tokens]",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "context-window", Usage: "the window in tokens (default: from the transcript's model, else 200000)"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON object per file: file, tokens, window, ratio, source, usage_tokens, estimated_tokens, model"},
			&cli.BoolFlag{Name: "tee", Usage: "pass the transcript to standard output and print the gauge on standard error"},
			&cli.Float64Flag{Name: "fail-above", Usage: "exit 5 when the ratio is above `RATIO` (e.g. 0.8); 1 stays a failure to read (default: 0, off)"},
			&cli.BoolFlag{Name: "calibrate", Usage: "compare the estimator with the usage deltas between assistant turns and print its error"},
			tokenizerFlag(),
		}, readFlags()...),
		Action: runGauge,
	}
}

func runGauge(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	opt := gauge.Options{Window: c.Int("context-window"), Format: cm.Format, OnBadLine: cm.onBadLine}
	if opt.Estimator, err = estimatorFlag(c); err != nil {
		return err
	}
	if err := notNegative(c, "context-window", "fail-above"); err != nil {
		return err
	}
	asJSON, tee, failAbove := c.Bool("json"), c.Bool("tee"), c.Float64("fail-above")
	named := len(cm.Files) > 1 // each line says which file it is of
	out := cm.Stdout
	if tee {
		out = c.App.ErrWriter
	}
	over := false
	measure := func(name string, r io.Reader) error {
		opt := opt
		opt.Name = name // what MeasureFile's warnings call the input
		if c.Bool("calibrate") {
			cal, err := gauge.Calibrate(name, r, opt)
			if err != nil {
				return err
			}
			gauge.WriteReport(out, name, cal, asJSON, named)
			return nil
		}
		var teeW io.Writer
		if tee {
			teeW = cm.Stdout
		}
		res, streamed, err := gauge.MeasureInput(name, r, teeW, cm.strict, opt)
		if err == nil && streamed && res.OffPath {
			cm.ui.warnf(msgGaugeOffPath, name)
		}
		if err != nil {
			return err
		}
		gauge.WriteReport(out, name, res, asJSON, named)
		if failAbove > 0 && res.Ratio > failAbove {
			over = true
		}
		return nil
	}
	if err := cm.Read(measure); err != nil {
		return err
	}
	if over {
		return &reported{code: exitAbove}
	}
	return nil
}

func tokenizerFlag() cli.Flag {
	return &cli.StringFlag{Name: "tokenizer", Value: "chars4", Usage: "estimate with chars4 (characters/4), or count with the offline o200k or cl100k tokenizer"}
}

func estimatorFlag(c *cli.Context) (gauge.Estimator, error) {
	est, err := gauge.NewEstimator(c.String("tokenizer"))
	if err != nil {
		return nil, usagef(msgBadTokenizer, err)
	}
	return est, nil
}
