package showback

import (
	"fmt"
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

// ChartData is what the chart draws: a bar per team (in the report's team order), split into busy
// and idle GPU-hours.
func (r *Report) ChartData() (teams []string, busy, idle []float64) {
	for _, t := range r.Teams {
		teams = append(teams, t.Name)
		idle = append(idle, round(t.IdleGPUHours, 2))
		busy = append(busy, round(max(0, t.GPUHours-t.IdleGPUHours), 2))
	}
	return teams, busy, idle
}

// chartOption is the bar chart: horizontal, one bar per team, busy and idle stacked, every team's
// label shown, a title with the week and a legend.
func (r *Report) chartOption() charts.BarChartOption {
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
	opt.Title = charts.TitleOption{
		Text:             fmt.Sprintf("GPU-hours per team, %s", r.Week),
		Subtext:          fmt.Sprintf("%s (%s): %s GPU-hours, %s idle", r.Span(), r.TimeZone, two(r.Total.GPUHours), pct(r.Total.IdleShare())),
		Offset:           charts.OffsetLeft,
		FontStyle:        charts.FontStyle{FontSize: 18},
		SubtextFontStyle: charts.FontStyle{FontSize: 12},
	}
	opt.Legend = charts.LegendOption{SeriesNames: ChartSeries, Offset: charts.OffsetRight, Symbol: charts.SymbolSquare,
		FontStyle: charts.FontStyle{FontSize: 12}}
	opt.Padding = charts.Box{Top: 20, Right: 40, Bottom: 20, Left: 20}
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
	opt.ValueAxis[0].ValueFormatter = func(v float64) string { return strconv.FormatFloat(round(v, 2), 'f', -1, 64) }
	opt.ValueAxis[0].LabelCountAdjustment = -2
	return opt
}

// PNG draws the report's chart.
func (r *Report) PNG() ([]byte, error) { return r.render(charts.ChartOutputPNG) }

// SVG draws the same chart as SVG, whose text can be read back.
func (r *Report) SVG() ([]byte, error) { return r.render(charts.ChartOutputSVG) }

func (r *Report) render(format string) ([]byte, error) {
	w, h := ChartSize(len(r.Teams))
	p := charts.NewPainter(charts.PainterOptions{OutputFormat: format, Width: w, Height: h})
	if err := p.BarChart(r.chartOption()); err != nil {
		return nil, fmt.Errorf("showback: draw the chart: %w", err)
	}
	b, err := p.Bytes()
	if err != nil {
		return nil, fmt.Errorf("showback: encode the chart: %w", err)
	}
	return b, nil
}
