package revisit_test

import (
	"fmt"

	"github.com/socialcrawl/crawler/revisit"
)

func Example() {
	// Past visits of a follower list: days between visits, new entries.
	followers := []revisit.Visit{{Interval: 1, Events: 30}, {Interval: 3, Events: 95}, {Interval: 2, Events: 58}}
	// A profile's counters: changed or not.
	profile := []revisit.Visit{{Interval: 1, Events: 0}, {Interval: 3, Events: 1}, {Interval: 2, Events: 0}}

	items := []revisit.Item{
		{Kind: revisit.List, Group: "brands", Age: 2,
			Rate: revisit.EstimateCount(revisit.DefaultPrior(revisit.List), followers, 14)},
		{Kind: revisit.Counter, Group: "brands", Age: 2,
			Rate: revisit.EstimateChange(revisit.DefaultPrior(revisit.Counter), profile, 14)},
		{Kind: revisit.List, Group: "brands", New: true, FullCost: 4},
	}
	decisions, sum := revisit.Schedule(items, revisit.Config{Budget: 7})
	for i, d := range decisions {
		fmt.Printf("%d: visit %v (%s), %.1f events for %.2f credits, priority %v\n", i, d.Visit, d.Reason, d.Yield, d.Cost, d.Priority)
	}
	fmt.Printf("%d visits, %.2f credits, %.1f events left unseen\n", sum.Visit, sum.Cost, sum.StalenessLeft)
	// Output:
	// 0: visit true (yield), 58.2 events for 2.66 credits, priority 2
	// 1: visit false (budget), 0.4 events for 1.00 credits, priority 1
	// 2: visit true (new), 0.0 events for 4.00 credits, priority 3
	// 2 visits, 6.66 credits, 0.4 events left unseen
}
