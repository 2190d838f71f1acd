// Package predict owns the queue-wait predictor: for a request that cannot start now, a median
// wait and a 90 % upper bound, from the live state of the pool and what happened to earlier
// requests. It also reads public job traces (SWF and the generic CSV) and replays them to
// measure the predictor against simple baselines (`quartermaster predict eval`).
//
// The service keeps one Predictor per pool (class) and calls it like this:
//
//	p := predict.New(predict.Config{Capacity: 64}) // GPUs in the class; 0 infers it
//
//	// a lease starts or ends (the predictor keeps each running lease's expected end):
//	p.Track(leaseID, predict.Lease{User: u, GPUs: 8, Start: started, Requested: 24 * time.Hour})
//	p.Untrack(leaseID)
//	p.ObserveRun(req, ended.Sub(started)) // so that expected ends follow real behaviour
//
//	// a quote, a request, or a queued reply; Running nil means the tracked leases, and each
//	// queued request carries the Estimate it got when it was submitted:
//	est := p.Predict(predict.Request{Queue: "train", User: u, Team: t, GPUs: 8, Requested: 24 * time.Hour},
//		predict.State{Now: clock.Now(), Capacity: effective, Queue: ahead})
//	// show est.Median and est.P90 (est.MayNotStart(): "may not start within est.Horizon");
//	// keep est with the request
//
//	// when the request starts, or leaves the queue without starting:
//	p.Observe(predict.Observation{Request: req, Estimate: est, Wait: started.Sub(submitted), Started: true})
//
// State.Capacity is the class's effective capacity: the GPUs a request could be placed on once
// caps, quotas and exclusive nodes are taken into account, so that a full pool reads as full.
//
// State.Running may instead list every running lease on each call; that gives the same
// predictions but looks up every lease's expected end again (about 1 ms with 10,000 leases).
// A fresh Predictor answers from the simulation alone; its answers improve as observations
// arrive. Nothing in the package reads a clock: every time comes from the caller.
package predict
