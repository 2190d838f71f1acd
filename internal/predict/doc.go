// Package predict owns the queue-wait predictor: for a request that cannot start now, a median
// wait and a 90 % upper bound, from the live state of the pool and the waits seen so far. It also
// reads public job traces (SWF and the generic CSV) and replays them to measure the predictor
// against simple baselines (`quartermaster predict eval`).
//
// The service keeps one Predictor per pool (class) and calls it like this:
//
//	p := predict.New(predict.Config{Capacity: 64}) // GPUs in the class; 0 infers it
//
//	// a quote, a request, or a queued reply:
//	est := p.Predict(predict.Request{Queue: "train", User: u, Team: t, GPUs: 8, Requested: 24 * time.Hour},
//		predict.State{Now: clock.Now(), Running: leases, Queue: ahead})
//	// show est.Median and est.P90; keep est with the lease
//
//	// when the lease starts (or leaves the queue without starting):
//	p.Observe(predict.Observation{Request: req, Estimate: est, Wait: started.Sub(submitted), Started: true})
//	// when a lease ends, so that expected ends of running leases follow real behaviour:
//	p.ObserveRun(req, ended.Sub(started))
//
// A fresh Predictor answers from the simulation alone; its answers improve as observations
// arrive. Nothing in the package reads a clock: every time comes from the caller.
package predict
