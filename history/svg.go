package history

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batonhq/baton/policy"
)

// SVGOptions tune RenderSVG.
type SVGOptions struct {
	// List adds the numbered steps under the picture, so that a file stands alone (an incident
	// report); the operator page shows them as a table instead.
	List bool
	// Now, when set, marks the present on a reply still running.
	Now time.Time
}

// Tone is the colour class of a step, shared by the picture and the page's table: an attempt's
// outcome (ok, or its failure's family), or the kind of a marker.
func Tone(s Step) string {
	switch s.Kind {
	case "attempt":
		switch s.Outcome {
		case "succeeded":
			return "ok"
		case "running":
			return "running"
		case "lost":
			return "skip" // baton's own fault: no failure family of a provider
		}
		switch s.Reason {
		case policy.ReasonRateLimit:
			return "rate"
		case policy.ReasonOverloaded:
			return "overload"
		case policy.ReasonTimeout, policy.ReasonEmptyResponse:
			return "timeout"
		case policy.ReasonAuth, policy.ReasonAuthPermanent, policy.ReasonBilling, policy.ReasonSessionExpired:
			return "auth"
		}
		return "fail"
	case "wait":
		if s.WaitFor == "cooldown" {
			return "sleep"
		}
		return "wait"
	case "skip":
		return "skip"
	case "probe":
		return "probe"
	case "switch":
		return "switch"
	case "session":
		if s.Decision == "roll back" {
			return "rollback"
		}
		return "write"
	}
	return "fail"
}

// WaitLabel names a wait for people: what it waited for, and how long.
func WaitLabel(s Step) string {
	switch s.WaitFor {
	case "retry":
		return "retry wait " + Short(s.Wait)
	case "rotate":
		return "backoff " + Short(s.Wait)
	case "cooldown":
		return "waits for a cooldown " + Short(s.Wait)
	}
	return "wait " + Short(s.Wait)
}

// Short prints a duration briefly: 850ms, 1.2s, 4m10s, 2h5m.
func Short(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + "s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		d = d.Round(time.Second)
		if s := int(d.Seconds()) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", int(d.Minutes()), s)
		}
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	d = d.Round(time.Minute)
	if m := int(d.Minutes()) % 60; m != 0 {
		return fmt.Sprintf("%dh%dm", int(d.Hours()), m)
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

// Lanes are the candidates of a timeline, in the order they first appear.
func Lanes(tl *Timeline) []string {
	var lanes []string
	for _, s := range tl.Steps {
		if s.Model != "" && s.Model != "/" && !slices.Contains(lanes, s.Model) {
			lanes = append(lanes, s.Model)
		}
	}
	return lanes
}

// Describe is a step in one line, as the picture's tooltips and list give it.
func Describe(i int, s Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d · %s · ", i+1, s.At.UTC().Format("15:04:05.000"))
	switch s.Kind {
	case "attempt":
		fmt.Fprintf(&b, "attempt %s with %s: %s", s.Model, s.Profile, s.Outcome)
	case "wait":
		b.WriteString(WaitLabel(s))
	case "skip":
		fmt.Fprintf(&b, "skip %s", s.Model)
		if s.Profile != "" {
			fmt.Fprintf(&b, " (%s)", s.Profile)
		}
	case "probe":
		b.WriteString("probe claimed (a cooled-down candidate is tried)")
	case "switch":
		fmt.Fprintf(&b, "live switch to %s", s.Model)
	case "session":
		if s.Decision == "roll back" {
			b.WriteString("roll back the fallback written to the session")
		} else {
			fmt.Fprintf(&b, "write fallback %s to the session", s.Model)
		}
	default:
		b.WriteString(s.Kind)
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, " · %s", s.Reason)
	}
	if s.Status != 0 {
		fmt.Fprintf(&b, " · %d", s.Status)
	}
	if s.Kind == "attempt" && !s.Started.IsZero() && s.At.After(s.Started) {
		fmt.Fprintf(&b, " · %s", Short(s.At.Sub(s.Started)))
	}
	if s.Kind == "attempt" || s.Kind == "skip" {
		fmt.Fprintf(&b, " → %s", s.Decision)
	}
	if s.Error != "" {
		fmt.Fprintf(&b, " · %s", clip(strings.Join(strings.Fields(s.Error), " "), 160))
	}
	return b.String()
}

// ResultLine is the timeline's outcome in one line.
func ResultLine(tl *Timeline) string {
	switch {
	case tl.Served != nil:
		return fmt.Sprintf("answered by %s/%s with %s", tl.Served.Provider, tl.Served.Model, tl.Served.Profile)
	case tl.Result == "restarted":
		return "restarted as run " + tl.NextRunID + " (a /model during the reply)"
	case tl.Error != "":
		if tl.ErrorType != "" {
			return tl.Result + ": " + tl.ErrorType + ": " + tl.Error
		}
		return tl.Result + ": " + tl.Error
	}
	return tl.Result
}

// Layout of the picture, in pixels.
const (
	svgLabelW  = 210 // the lanes' names
	svgRightW  = 90  // room for the last marker's label
	svgLaneH   = 62
	svgMinPlot = 720
	svgMaxPlot = 1400
	svgListRow = 16
	charW      = 6.2 // an estimate of one character at 11px
	labelChars = 30  // a lane name that fits svgLabelW
)

// timeScale maps times to x: each stretch between two consecutive moments of the story gets a
// width that grows with the log of its length, so a 20 ms attempt and a 4-minute wait both show.
type timeScale struct {
	ts   []int64   // moments, ascending (unix ns)
	xs   []float64 // their x
	left float64
}

func newTimeScale(moments []time.Time, left float64) (*timeScale, float64) {
	var ts []int64
	for _, m := range moments {
		if !m.IsZero() {
			ts = append(ts, m.UnixNano())
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	sc := &timeScale{ts: ts, left: left}
	if len(ts) < 2 {
		sc.xs = make([]float64, len(ts))
		for i := range sc.xs {
			sc.xs[i] = left + svgMinPlot/2
		}
		return sc, svgMinPlot
	}
	widths := make([]float64, len(ts)-1)
	sum := 0.0
	for i := range widths {
		d := float64(ts[i+1]-ts[i]) / float64(10*time.Millisecond)
		widths[i] = 14 + 44*math.Log10(1+d)
		sum += widths[i]
	}
	plot := math.Min(math.Max(sum, svgMinPlot), svgMaxPlot)
	k := plot / sum
	sc.xs = make([]float64, len(ts))
	x := left
	sc.xs[0] = x
	for i, w := range widths {
		x += w * k
		sc.xs[i+1] = x
	}
	return sc, plot
}

func (sc *timeScale) x(t time.Time) float64 {
	if len(sc.ts) == 0 {
		return sc.left
	}
	n := t.UnixNano()
	i, found := slices.BinarySearch(sc.ts, n)
	switch {
	case found:
		return sc.xs[i]
	case i == 0:
		return sc.xs[0]
	case i >= len(sc.ts):
		return sc.xs[len(sc.xs)-1]
	}
	f := float64(n-sc.ts[i-1]) / float64(sc.ts[i]-sc.ts[i-1])
	return sc.xs[i-1] + f*(sc.xs[i]-sc.xs[i-1])
}

// RenderSVG draws a timeline: one lane per candidate, a bar per attempt coloured by its outcome
// with its reason and status, waits as hatched gaps (a sleep until a cooldown ends as a band
// across every lane), skips, probes, the fallback's write and roll back, a live switch, the
// notices and the result. Every text is escaped; the output is a standalone SVG document that
// can also be inlined in HTML.
func RenderSVG(tl *Timeline, o SVGOptions) []byte {
	lanes := Lanes(tl)
	if len(lanes) == 0 {
		lanes = []string{"(no candidate tried yet)"}
	}
	laneOf := map[string]int{}
	for i, l := range lanes {
		laneOf[l] = i
	}
	// Moments of the story.
	moments := []time.Time{tl.Start, tl.End}
	for _, s := range tl.Steps {
		moments = append(moments, s.At, s.Started)
		if s.Kind == "wait" {
			moments = append(moments, s.At.Add(s.Wait))
		}
	}
	if !o.Now.IsZero() && tl.Result == "running" {
		moments = append(moments, o.Now)
	}
	left := float64(svgLabelW)
	sc, plot := newTimeScale(moments, left)
	width := left + plot + svgRightW

	var b bytes.Buffer
	title := "reply " + tl.WorkflowID
	if a := tl.Request.Agent; a != "" {
		title += " · agent " + a
	}
	if s := tl.Request.Session; s != "" {
		title += " · session " + s
	}
	legend := legendItems()
	legendRows := legendLayout(legend, width-24)
	top := 52 + 18*float64(legendRows) + 34 // the lanes start below the title, result, legend and axis
	lanesH := svgLaneH * float64(len(lanes))
	y := top + lanesH + 14
	notesH := 18 * float64(len(tl.Notices))
	if tl.Unreadable != "" {
		notesH += 18
	}
	listH := 0.0
	if o.List {
		listH = 10 + svgListRow*float64(len(tl.Steps))
	}
	height := y + notesH + listH + 12

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="bt-timeline" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n",
		width, height, width, height, esc("failover timeline of "+title))
	b.WriteString(svgStyle)
	fmt.Fprintf(&b, `<rect class="bt-bg" x="0" y="0" width="%.0f" height="%.0f"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text class="bt-title" x="12" y="20">%s</text>`+"\n", esc(clip(title, int((width-24)/7))))
	fmt.Fprintf(&b, `<text class="bt-result bt-result-%s" x="12" y="38">%s</text>`+"\n", esc(tl.Result), esc(clip(ResultLine(tl), int((width-24)/charW))))
	drawLegend(&b, legend, width-24, 52)

	// Axis: relative time at the moments where there is room for a label.
	axisY := top - 6
	fmt.Fprintf(&b, `<line class="bt-axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", left, axisY, left+plot, axisY)
	origin := tl.Start
	if origin.IsZero() && len(sc.ts) > 0 {
		origin = time.Unix(0, sc.ts[0])
	}
	lastLabel := -1e9
	for i, t := range sc.ts {
		x := sc.xs[i]
		fmt.Fprintf(&b, `<line class="bt-tick" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, axisY-3, x, top+lanesH)
		if x-lastLabel < 56 && i != 0 {
			continue
		}
		lastLabel = x
		label := "+" + Short(time.Unix(0, t).Sub(origin))
		if i == 0 {
			label = time.Unix(0, t).UTC().Format("15:04:05")
		}
		fmt.Fprintf(&b, `<text class="bt-ticklabel" x="%.1f" y="%.1f">%s</text>`, x+2, axisY-5, esc(label))
	}
	b.WriteString("\n")

	// Lanes.
	for i, l := range lanes {
		ly := top + svgLaneH*float64(i)
		fmt.Fprintf(&b, `<g class="bt-lane" data-model="%s"><rect class="bt-lane-bg bt-lane-%d" x="0" y="%.1f" width="%.0f" height="%d"/>`+
			`<text class="bt-lane-label" x="12" y="%.1f"><title>%s</title>%s</text></g>`+"\n",
			esc(l), i%2, ly, width, svgLaneH, ly+svgLaneH/2+4, esc(l), esc(clip(l, labelChars)))
	}

	laneY := func(model string) float64 { return top + svgLaneH*float64(laneOf[model]) }
	// The lane a step without a model of its own belongs to: the last candidate before it.
	current := lanes[0]
	stepLane := make([]string, len(tl.Steps))
	for i, s := range tl.Steps {
		if _, ok := laneOf[s.Model]; ok && s.Model != "" {
			current = s.Model
		} else if s.Kind == "probe" {
			// A probe precedes the attempt it claims.
			for _, n := range tl.Steps[i+1:] {
				if n.Kind == "attempt" {
					current = n.Model
					break
				}
			}
		}
		stepLane[i] = current
	}

	// The thread of the story: an elbow from each candidate's last step to the next lane.
	prevX, prevLane := -1.0, ""
	for i, s := range tl.Steps {
		if s.Kind != "attempt" && s.Kind != "skip" && s.Kind != "switch" {
			continue
		}
		lane := stepLane[i]
		x0 := sc.x(s.At)
		if s.Kind == "attempt" && !s.Started.IsZero() {
			x0 = sc.x(s.Started)
		}
		if prevLane != "" && prevLane != lane {
			y1, y2 := laneY(prevLane)+svgLaneH/2, laneY(lane)+svgLaneH/2
			fmt.Fprintf(&b, `<path class="bt-thread" d="M%.1f %.1f H%.1f V%.1f H%.1f"/>`+"\n", prevX, y1, (prevX+x0)/2, y2, x0)
		}
		prevX, prevLane = sc.x(s.At), lane
	}

	// Cooldown sleeps first (bands behind everything), then the rest.
	for i, s := range tl.Steps {
		if s.Kind != "wait" || s.WaitFor != "cooldown" {
			continue
		}
		x1, x2 := sc.x(s.At), sc.x(s.At.Add(s.Wait))
		fmt.Fprintf(&b, `<g class="bt-step bt-wait bt-sleep" data-step="%d"><title>%s</title>`+
			`<rect class="bt-sleepband" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`+
			`<text class="bt-marklabel" x="%.1f" y="%.1f">%s</text></g>`+"\n",
			i+1, esc(Describe(i, s)), x1, top, math.Max(x2-x1, 3), lanesH, x1+3, top+11, esc(fit(WaitLabel(s), x2-x1)))
	}
	labels := underLabels(tl.Steps, stepLane, sc)
	for i, s := range tl.Steps {
		ly := laneY(stepLane[i])
		tip := esc(Describe(i, s))
		lines := [2]string{}
		if l := labels[i]; l != nil {
			lines = l.lines
		}
		switch s.Kind {
		case "attempt":
			x1, x2 := sc.x(s.At), sc.x(s.At)
			if !s.Started.IsZero() {
				x1 = sc.x(s.Started)
			}
			if s.Outcome == "running" && !o.Now.IsZero() {
				x2 = sc.x(o.Now)
			}
			if x2-x1 < 8 {
				x1 = x2 - 8
			}
			w := x2 - x1
			fmt.Fprintf(&b, `<g class="bt-step bt-attempt bt-%s" data-step="%d" data-model="%s" data-auth-profile="%s" data-outcome="%s" data-reason="%s"><title>%s</title>`,
				Tone(s), i+1, esc(s.Model), esc(s.Profile), esc(s.Outcome), esc(string(s.Reason)), tip)
			fmt.Fprintf(&b, `<rect class="bt-bar" x="%.1f" y="%.1f" width="%.1f" height="20" rx="3"/>`, x1, ly+7, w)
			if w >= 14 {
				fmt.Fprintf(&b, `<text class="bt-barnum" x="%.1f" y="%.1f">%d</text>`, x1+w/2, ly+21, i+1)
			}
			fmt.Fprintf(&b, `<text class="bt-barlabel" x="%.1f" y="%.1f">%s</text><text class="bt-barlabel bt-why" x="%.1f" y="%.1f">%s</text></g>`+"\n",
				x1, ly+40, esc(lines[0]), x1, ly+53, esc(lines[1]))
		case "wait":
			if s.WaitFor == "cooldown" {
				continue
			}
			x1, x2 := sc.x(s.At), sc.x(s.At.Add(s.Wait))
			fmt.Fprintf(&b, `<g class="bt-step bt-wait" data-step="%d"><title>%s</title>`+
				`<rect class="bt-gap" x="%.1f" y="%.1f" width="%.1f" height="20" rx="3"/>`+
				`<text class="bt-gaplabel" x="%.1f" y="%.1f">%s</text></g>`+"\n",
				i+1, tip, x1, ly+7, math.Max(x2-x1, 3), (x1+x2)/2, ly+21, esc(fit(Short(s.Wait), x2-x1)))
		case "skip":
			x := sc.x(s.At)
			cy := ly + 17
			fmt.Fprintf(&b, `<g class="bt-step bt-skip" data-step="%d" data-model="%s" data-reason="%s"><title>%s</title>`+
				`<circle class="bt-skipmark" cx="%.1f" cy="%.1f" r="7"/><path class="bt-skipline" d="M%.1f %.1f L%.1f %.1f"/>`+
				`<text class="bt-barlabel" x="%.1f" y="%.1f">%s</text><text class="bt-barlabel bt-why" x="%.1f" y="%.1f">%s</text></g>`+"\n",
				i+1, esc(s.Model), esc(string(s.Reason)), tip, x, cy, x-5, cy+5, x+5, cy-5, x-7, ly+40, esc(lines[0]), x-7, ly+53, esc(lines[1]))
		case "probe":
			x := sc.x(s.At)
			cy := ly + 17
			fmt.Fprintf(&b, `<g class="bt-step bt-probe" data-step="%d"><title>%s</title>`+
				`<path class="bt-probemark" d="M%.1f %.1f l6 6 l-6 6 l-6 -6 z"/><text class="bt-marklabel" x="%.1f" y="%.1f">probe</text></g>`+"\n",
				i+1, tip, x, cy-6, x+8, ly+11)
		case "switch":
			x := sc.x(s.At)
			cy := ly + 17
			fmt.Fprintf(&b, `<g class="bt-step bt-switch" data-step="%d" data-model="%s"><title>%s</title>`+
				`<path class="bt-switchmark" d="M%.1f %.1f l4 -8 l0 6 l5 0 l-4 8 l0 -6 z"/><text class="bt-marklabel" x="%.1f" y="%.1f">live switch</text></g>`+"\n",
				i+1, esc(s.Model), tip, x-4, cy+4, x+8, ly+11)
		case "session":
			x := sc.x(s.At)
			label, cls := "fallback written", "bt-write"
			if s.Decision == "roll back" {
				label, cls = "rolled back", "bt-rollback"
			}
			fmt.Fprintf(&b, `<g class="bt-step %s" data-step="%d"><title>%s</title>`+
				`<line class="bt-flagpole" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><path class="bt-flag" d="M%.1f %.1f l9 4 l-9 4 z"/>`+
				`<text class="bt-marklabel" x="%.1f" y="%.1f">%s</text></g>`+"\n",
				cls, i+1, tip, x, ly+2, x, ly+svgLaneH-4, x, ly+3, x+11, ly+10, label)
		}
	}
	if !o.Now.IsZero() && tl.Result == "running" {
		x := sc.x(o.Now)
		fmt.Fprintf(&b, `<g class="bt-now"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f">now</text></g>`+"\n",
			x, top-10, x, top+lanesH, x+3, top+lanesH-4)
	}

	// Notices, then the list.
	for _, n := range tl.Notices {
		fmt.Fprintf(&b, `<text class="bt-notice" x="12" y="%.1f">%s</text>`+"\n", y+4, esc(clip(n, int((width-24)/charW))))
		y += 18
	}
	if tl.Unreadable != "" {
		fmt.Fprintf(&b, `<text class="bt-unreadable" x="12" y="%.1f">%s</text>`+"\n", y+4, esc(clip(tl.Unreadable, int((width-24)/charW))))
		y += 18
	}
	if o.List {
		y += 10
		for i, s := range tl.Steps {
			fmt.Fprintf(&b, `<text class="bt-list bt-%s" x="12" y="%.1f">%s</text>`+"\n", Tone(s), y, esc(clip(Describe(i, s), int((width-24)/6.6))))
			y += svgListRow
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// underLabel is the text under a bar, a gap or a skip: two lines, starting at x.
type underLabel struct {
	x     float64
	lines [2]string
}

// underLabels writes what goes under each step, each cut to the room before the next label of
// its lane. An attempt repeating the profile, status and reason of the one before it on its lane
// (a retry) gets none: its bar's number and tooltip say it.
func underLabels(steps []Step, lanes []string, sc *timeScale) []*underLabel {
	labels := make([]*underLabel, len(steps))
	last := map[string]string{}
	for i, s := range steps {
		switch s.Kind {
		case "attempt":
			var why []string
			if s.Status != 0 {
				why = append(why, fmt.Sprint(s.Status))
			}
			if s.Outcome == "failed" && s.Reason != "" {
				why = append(why, string(s.Reason))
			}
			if s.Outcome == "running" {
				why = append(why, "in flight")
			}
			key := s.Profile + "|" + strings.Join(why, " ") + "|" + s.Outcome
			if key == last[lanes[i]] {
				continue
			}
			last[lanes[i]] = key
			x := sc.x(s.At)
			if !s.Started.IsZero() {
				x = math.Min(x-8, sc.x(s.Started))
			}
			labels[i] = &underLabel{x: x, lines: [2]string{s.Profile, strings.Join(why, " ")}}
		case "skip":
			last[lanes[i]] = ""
			labels[i] = &underLabel{x: sc.x(s.At) - 7, lines: [2]string{"skipped", string(s.Reason)}}
		}
	}
	right := sc.xs[len(sc.xs)-1] + svgRightW
	for i, l := range labels {
		if l == nil {
			continue
		}
		room := right - l.x
		for j := i + 1; j < len(labels); j++ {
			if labels[j] != nil && lanes[j] == lanes[i] {
				room = labels[j].x - l.x
				break
			}
		}
		l.lines[0], l.lines[1] = fit(l.lines[0], room), fit(l.lines[1], room)
	}
	return labels
}

type legendItem struct{ tone, label string }

func legendItems() []legendItem {
	return []legendItem{{"ok", "answered"}, {"rate", "rate limit"}, {"overload", "overloaded"}, {"timeout", "timeout"},
		{"auth", "auth / billing"}, {"fail", "other failure"}, {"wait", "retry wait"}, {"sleep", "cooldown wait"},
		{"skip", "skipped"}, {"probe", "probe"}, {"write", "fallback written"}, {"rollback", "rolled back"}, {"switch", "live switch"}, {"running", "in flight"}}
}

func legendWidth(it legendItem) float64 { return 20 + float64(len(it.label))*charW + 14 }

func legendLayout(items []legendItem, maxW float64) int {
	rows, x := 1, 0.0
	for _, it := range items {
		w := legendWidth(it)
		if x > 0 && x+w > maxW {
			rows, x = rows+1, 0
		}
		x += w
	}
	return rows
}

func drawLegend(b *bytes.Buffer, items []legendItem, maxW, y float64) {
	x := 0.0
	b.WriteString(`<g class="bt-legend">`)
	for _, it := range items {
		w := legendWidth(it)
		if x > 0 && x+w > maxW {
			x, y = 0, y+18
		}
		fmt.Fprintf(b, `<rect class="bt-swatch bt-sw-%s" x="%.1f" y="%.1f" width="14" height="10" rx="2"/><text class="bt-legendlabel" x="%.1f" y="%.1f">%s</text>`,
			it.tone, 12+x, y, 12+x+18, y+9, esc(it.label))
		x += w
	}
	b.WriteString("</g>\n")
}

// fit cuts a label to the room it has (nothing when there is no room for three letters).
func fit(s string, room float64) string {
	n := int((room - 4) / charW)
	if n < 3 {
		return ""
	}
	return clip(s, n)
}

// clip cuts s to n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func esc(s string) string { return html.EscapeString(s) }

// svgStyle styles the picture; the class names start with bt- so the page's own CSS and the
// picture's do not meet when it is inlined.
const svgStyle = `<style>
.bt-timeline{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;font-size:11px}
.bt-bg{fill:#fff}
.bt-title{font-size:13px;font-weight:600;fill:#1f2328}
.bt-result{font-size:12px;fill:#1f2328}.bt-result-failed{fill:#b42318}.bt-result-answered{fill:#1a7f37}
.bt-legendlabel{fill:#57606a;font-size:11px}
.bt-axis{stroke:#8c959f;stroke-width:1}.bt-tick{stroke:#eaeef2;stroke-width:1}
.bt-ticklabel{fill:#57606a;font-size:10px}
.bt-lane-0{fill:#f6f8fa}.bt-lane-1{fill:#fff}
.bt-lane-label{fill:#1f2328;font-weight:600;font-size:12px}
.bt-thread{fill:none;stroke:#8c959f;stroke-width:1;stroke-dasharray:3 3}
.bt-bar{stroke:rgba(0,0,0,.25);stroke-width:1}
.bt-barnum{fill:#fff;font-size:10px;font-weight:700;text-anchor:middle}
.bt-barlabel{fill:#424a53;font-size:10px}.bt-why{fill:#6e7781}.bt-gaplabel{fill:#57606a;font-size:10px;text-anchor:middle}
.bt-marklabel{fill:#424a53;font-size:10px;font-style:italic}
.bt-ok .bt-bar,.bt-sw-ok{fill:#2da44e}
.bt-rate .bt-bar,.bt-sw-rate{fill:#e16f24}
.bt-overload .bt-bar,.bt-sw-overload{fill:#d4a72c}
.bt-timeout .bt-bar,.bt-sw-timeout{fill:#8250df}
.bt-auth .bt-bar,.bt-sw-auth{fill:#cf222e}
.bt-fail .bt-bar,.bt-sw-fail{fill:#6e7781}
.bt-running .bt-bar,.bt-sw-running{fill:#54aeff}
.bt-gap,.bt-sw-wait{fill:#fff;stroke:#8c959f;stroke-width:1;stroke-dasharray:3 2}
.bt-sleepband,.bt-sw-sleep{fill:#ddf4ff;stroke:#54aeff;stroke-width:1;stroke-dasharray:4 3}
.bt-skipmark,.bt-sw-skip{fill:#fff;stroke:#6e7781;stroke-width:1.5}.bt-skipline{stroke:#6e7781;stroke-width:1.5}
.bt-probemark,.bt-sw-probe{fill:#1b7c83}
.bt-write .bt-flag,.bt-sw-write{fill:#0969da}.bt-write .bt-flagpole{stroke:#0969da;stroke-width:1.5}
.bt-rollback .bt-flag,.bt-sw-rollback{fill:#9a6700}.bt-rollback .bt-flagpole{stroke:#9a6700;stroke-width:1.5;stroke-dasharray:3 2}
.bt-switchmark,.bt-sw-switch{fill:#bf3989}
.bt-now line{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:4 3}.bt-now text{fill:#cf222e;font-size:10px}
.bt-notice{fill:#0969da;font-size:12px}
.bt-unreadable{fill:#b42318;font-size:12px}
.bt-list{font-family:ui-monospace,SFMono-Regular,Menlo,"DejaVu Sans Mono",monospace;font-size:11px;fill:#1f2328}
</style>
`
