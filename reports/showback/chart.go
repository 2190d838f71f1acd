package showback

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-analyze/charts"
)

// Chart dimensions: the chart is ChartWidth pixels wide and grows by ChartRowHeight per team, so
// that fifty teams' labels stay readable.
const (
	ChartWidth     = 1000
	ChartRowHeight = 28
	chartBaseH     = 170
	chartMinH      = 360
)

// ChartSize is the size in pixels of the chart of a report with n teams.
func ChartSize(n int) (width, height int) {
	return ChartWidth, max(chartMinH, chartBaseH+ChartRowHeight*n)
}

// ChartSeries names the chart's two stacked series.
var ChartSeries = []string{"busy GPU-hours", "idle GPU-hours"}

// ChartData is what the chart draws: a bar per team (in the report's team order), as long as its
// GPU-hours, split into busy and idle GPU-hours. The idle part is at most the GPU-hours: where
// telemetry saw more idle time than the team held GPUs (rollups that came late or twice), the
// whole bar is idle and no longer than what the team used.
func (r *Report) ChartData() (teams []string, busy, idle []float64) {
	for _, t := range r.Teams {
		used := round(max(0, t.GPUHours), 2)
		i := min(round(max(0, t.Idle()), 2), used)
		teams = append(teams, t.Name)
		idle = append(idle, i)
		busy = append(busy, round(used-i, 2))
	}
	return teams, busy, idle
}

// chartOption is the bar chart: horizontal, one bar per team, busy and idle stacked, every team's
// label shown, room above for the title with the week (its GPU-hours, cost and idle share) that
// drawTitle writes, and a legend.
func (r *Report) chartOption(p *charts.Painter) charts.BarChartOption {
	teams, busy, idle := r.ChartData()
	// The first team at the top: the category axis of a horizontal chart runs upwards.
	n := len(teams)
	rt, rb, ri := make([]string, n), make([]float64, n), make([]float64, n)
	for i := range teams {
		rt[n-1-i], rb[n-1-i], ri[n-1-i] = teams[i], busy[i], idle[i]
	}
	opt := charts.NewBarChartOptionWithData([][]float64{rb, ri})
	opt.Horizontal = true
	opt.StackSeries = charts.Ptr(true)
	// The title and its subtitle are drawn by drawTitle, both from the left edge: the library
	// centres each line of its title over the widest one, which put the title in the middle of
	// the subtitle. The chart starts below the room they take; the legend sits under them.
	opt.Title = charts.TitleOption{Show: charts.Ptr(false)}
	opt.Legend = charts.LegendOption{SeriesNames: ChartSeries, Offset: charts.OffsetRight, Symbol: charts.SymbolSquare,
		FontStyle: charts.FontStyle{FontSize: 12}}
	opt.Padding = charts.Box{Top: chartPadTop + r.titleHeight(p), Right: 40, Bottom: 20, Left: chartPadLeft}
	opt.CategoryAxis = charts.CategoryAxisOption{
		Labels:         rt,
		LabelCount:     max(n, 1),
		LabelFontStyle: charts.FontStyle{FontSize: 12},
	}
	if n == 0 {
		opt.CategoryAxis.Labels = []string{"(no teams)"}
		opt.SeriesList = charts.NewSeriesListBar([][]float64{{0}, {0}})
	}
	opt.ValueAxis[0].Title = "GPU-hours"
	opt.ValueAxis[0].Min = charts.Ptr(0.0)
	opt.ValueAxis[0].ValueFormatter = axisNumber
	opt.ValueAxis[0].LabelFontStyle = charts.FontStyle{FontSize: 12}
	// The axis's numbers are laid out here rather than by the chart library, which spaces them as
	// if the axis were as wide as the whole chart: beside long team names the last two ran into
	// each other (4000 over 4500).
	labelW := 0
	for _, t := range opt.CategoryAxis.Labels {
		labelW = max(labelW, measure(p, t))
	}
	axisW := ChartWidth - opt.Padding.Left - opt.Padding.Right - labelW - chartAxisGap
	var top float64
	for i := range busy {
		top = max(top, busy[i]+idle[i])
	}
	if end, labels := axisTicks(top, axisW, func(s string) int { return measure(p, s) }); labels > 0 {
		opt.ValueAxis[0].Max = charts.Ptr(end)
		opt.ValueAxis[0].LabelCount = labels
	} else {
		opt.ValueAxis[0].LabelCountAdjustment = -2
	}
	return opt
}

// The chart's padding above (over the title) and on the left (before the title and the team names).
const (
	chartPadTop  = 20
	chartPadLeft = 20
)

// chartTitles are the chart's title and subtitle: the week, and its days, time zone, GPU-hours,
// cost and idle share; of a week in which no GPU was held, that none was used, as the text and
// chat reports of such a week say, not a share of nothing ("n/a idle").
func (r *Report) chartTitles() [2]string {
	what := fmt.Sprintf("%s GPU-hours, %s, %s", two(r.Total.GPUHours), r.Money(r.Total.Cost), idleShareText(r.Total.Figures))
	if r.Total.nothingHeld() {
		what = noGPUsUsed
	}
	return [2]string{fmt.Sprintf("GPU-hours per team, %s", r.Week), fmt.Sprintf("%s (%s): %s", r.Span(), r.TimeZone, what)}
}

// chartTitleStyles are the fonts of the title and the subtitle, in the theme's title colour.
func chartTitleStyles() [2]charts.FontStyle {
	c := charts.GetDefaultTheme().GetTitleTextColor()
	return [2]charts.FontStyle{{FontSize: 18, FontColor: c}, {FontSize: 12, FontColor: c}}
}

// titleHeight is the height in pixels of the title and the subtitle, one above the other.
func (r *Report) titleHeight(p *charts.Painter) int {
	h, styles := 0, chartTitleStyles()
	for i, s := range r.chartTitles() {
		h += p.MeasureText(s, 0, styles[i]).Height()
	}
	return h
}

// drawTitle writes the title and, under it, the subtitle, each from the chart's left padding,
// in the room chartOption kept above the legend.
func (r *Report) drawTitle(p *charts.Painter) {
	y, styles := chartPadTop, chartTitleStyles()
	for i, s := range r.chartTitles() {
		y += p.MeasureText(s, 0, styles[i]).Height()
		p.Text(s, chartPadLeft, y, 0, styles[i])
	}
}

// chartAxisGap is room kept between the team names and the GPU-hour axis.
const chartAxisGap = 20

// axisMaxLabels is the most numbers the GPU-hour axis shows.
const axisMaxLabels = 8

// axisNumber writes a number of the GPU-hour axis: 2.4, never 2.4000000000000004.
func axisNumber(v float64) string { return strconv.FormatFloat(round(v, 2), 'f', -1, 64) }

// measure is how many pixels wide s is in the chart's labels.
func measure(p *charts.Painter, s string) int {
	return p.MeasureText(s, 0, charts.FontStyle{FontSize: 12, FontColor: charts.ColorBlack}).Width()
}

// axisTicks lays out the GPU-hour axis of a chart whose longest bar is top, on an axis width
// pixels wide: the axis ends at end with labels numbers a round step apart (1, 2, 2.5 or 5 times
// a power of ten, no finer than the hundredths the figures have), as many as fit without running
// into one another. Each number but the last starts at its tick and the last ends at the axis's
// end, so two neighbours need their widths together within a step. labels is 0 when top is not
// positive: the library's default axis then does.
func axisTicks(top float64, width int, textW func(string) int) (end float64, labels int) {
	if !(top > 0) || math.IsInf(top, 1) {
		return 0, 0
	}
	const gap = 8 // pixels at least between two numbers
	exp := int(math.Floor(math.Log10(top / axisMaxLabels)))
	for e := max(exp, -2); e < exp+12; e++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * math.Pow(10, float64(e))
			if e == -2 && m == 2.5 {
				continue // 0.025 is finer than the hundredths
			}
			n := int(math.Ceil(top/step - 1e-9))
			if n+1 > axisMaxLabels {
				continue
			}
			n = max(n, 1)
			widest := 0
			for k := 0; k <= n; k++ {
				widest = max(widest, textW(axisNumber(float64(k)*step)))
			}
			if n == 1 || 2*widest+gap <= width/n {
				return float64(n) * step, n + 1
			}
		}
	}
	return 0, 0
}

// PNG draws the report's chart.
func (r *Report) PNG() ([]byte, error) { return r.render(charts.ChartOutputPNG) }

// SVG draws the same chart as SVG, whose text can be read back.
func (r *Report) SVG() ([]byte, error) { return r.render(charts.ChartOutputSVG) }

func (r *Report) render(format string) ([]byte, error) {
	w, h := ChartSize(len(r.Teams))
	p := charts.NewPainter(charts.PainterOptions{OutputFormat: format, Width: w, Height: h})
	if err := p.BarChart(r.chartOption(p)); err != nil {
		return nil, fmt.Errorf("showback: draw the chart: %w", err)
	}
	r.drawTitle(p) // after the chart, which paints its background first
	b, err := p.Bytes()
	if err != nil {
		return nil, fmt.Errorf("showback: encode the chart: %w", err)
	}
	return b, nil
}
