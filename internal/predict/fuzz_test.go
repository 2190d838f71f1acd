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
