package predict

import (
	"strings"
	"testing"
)

// FuzzReadTrace: no trace file, however broken, makes the readers panic, sacct's included.
func FuzzReadTrace(f *testing.F) {
	f.Add("job_id,submit_time,start_time,end_time,gpus,user,queue,requested_seconds\n1,0,10,100,1,u,q,3600\n2,5,,,-1,,,\n", "csv")
	f.Add("; MaxProcs: 100\n1 0 10 90 4 -1 -1 4 3600 -1 1 3 1 -1 1 -1 -1 -1\n", "swf")
	f.Add("job_id,submit_time\nx,y\n", "csv")
	f.Add("job_id,submit_time,start_time,end_time,gpus\n1,2020-04-01 00:00:00,2020-04-01T00:01:00Z,None,8\n", "csv")
	f.Add("job_id,user,gpu_num,state,submit_time,start_time,duration,vc\n1,u,8,COMPLETED,0,60,3600,vc1\n2,v,1,CANCELLED,5,,0,vc2\n", "csv")
	f.Add(sacctSample, "sacct")
	f.Add(strings.ReplaceAll(sacctSample, "\n", "|\n"), "")
	f.Add("JobID,Submit,Start,End,ReqGRES,AllocGRES,NCPUS\n1,2024-01-01T00:00:00,None,2024-01-01T00:01:00,gpu:a100:2(IDX:0,1),\"gres/gpu=1,cpu=2\",4\n1.0,x,y,z,,,\n", "csv")
	f.Add("JobIDRaw||Submit||Start||End||Timelimit||AllocTRES||State||NodeList\n5_[1-3]||0||1704067200||1704067200||1-2:3||cpu=1||CANCELLED by 0||None assigned\n", "sacct")
	f.Add(jobTableSample, "")
	f.Add("id_job,time_submit,time_start,time_end,tres_req,state\n1,5,0,9,\"1=2,1001=x,1002=-3\",260\n2,0,0,0,,\n", "csv")
	f.Add("job_id,submit_time,wait_time,run_time,gpus\n1,0,60,3600,8\n2,30,-1,0,1\n3,40,,5,1\n4,,9,9,1\n5,1e300,NaN,1e999,2\n", "csv")
	f.Add("instance_sn,gpu_request,creation_time,scheduled_time,deletion_time\ni0,1,,,\ni1,1,,5,90\ni2,1,10,12,\ni3,1,,50,60\n", "csv")
	f.Fuzz(func(t *testing.T, src, format string) {
		switch format {
		case "csv", "swf", "sacct", "":
		default:
			format = "csv"
		}
		if _, err := ReadTrace(strings.NewReader(src), format); err != nil && err.Error() == "" {
			t.Fatal("an error without a message")
		}
	})
}

// FuzzPhilly: no file, however broken, makes the reader of Philly's job log panic, and every job
// it reads has a submit time and, if it started, a start no earlier than that.
func FuzzPhilly(f *testing.F) {
	f.Add(`[{"status": "Pass", "vc": "ee9e8c", "jobid": "application_1", "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23", "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]}, {"start_time": "2017-10-07 01:13:30", "end_time": "None", "detail": [{"ip": "m412", "gpus": ["gpu0"]}, {"ip": "m413", "gpus": ["gpu0"]}]}], "submitted_time": "2017-10-07 01:11:39", "user": "ce2f4c"}]`)
	f.Add(`[{"status": "Killed", "vc": "v", "jobid": "a", "attempts": [], "submitted_time": "2017-10-07 01:11:39", "user": "u"}, {"attempts": [{"start_time": "None", "end_time": null, "detail": []}], "submitted_time": "None"}]`)
	f.Add("{\"vc\": \"v\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": [{\"start_time\": \"2017-10-07 01:11:40\", \"detail\": [{\"gpus\": []}]}]}\n{\"vc\": 3}\n")
	f.Add(`[{"submitted_time": "2017-10-07 01:11:39", "attempts": [{"start_time": "2017-10-07 01:11:30", "detail": [{"gpus": 4}]}]}, 42, null, "x"]`)
	f.Add("[\n{\"vc\": ]")
	f.Fuzz(func(t *testing.T, src string) {
		for _, format := range []string{FormatPhilly, ""} {
			tr, err := ReadTrace(strings.NewReader(src), format)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("an error without a message")
				}
				continue
			}
			for _, j := range tr.Jobs {
				if j.Submit < 0 || (j.Started() && j.Start < j.Submit) || (j.Started() && j.End >= 0 && j.End < j.Start) || j.GPUs < 0 {
					t.Fatalf("job %+v", j)
				}
			}
		}
	})
}
