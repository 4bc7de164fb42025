package deploy

import (
	"os"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeJob decodes a manifest into the Job type of the Kubernetes API,
// refusing unknown fields: a misspelt or misplaced key (which kubectl
// would reject at apply time) fails here instead.
func decodeJob(data []byte) (*batchv1.Job, error) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(data, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestKubernetesJobManifest checks the shipped Indexed Job against the
// batch/v1 schema and against what `afin bench --shard` needs: one pod per
// shard index, the shard count in SHARDS equal to the completions, and the
// shared volume holding both the results and the reference cache.
func TestKubernetesJobManifest(t *testing.T) {
	data, err := os.ReadFile("k8s-bench-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJob(data)
	if err != nil {
		t.Fatalf("k8s-bench-job.yaml is not a valid batch/v1 Job: %v", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("apiVersion/kind = %s/%s, want batch/v1/Job", job.APIVersion, job.Kind)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode = %v, want Indexed (JOB_COMPLETION_INDEX is the shard)", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		t.Errorf("completions %v and parallelism %v should both be the shard count", spec.Completions, spec.Parallelism)
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q: a Job needs Never or OnFailure", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if got, want := envValue(c, "SHARDS"), *spec.Completions; got != strconv.Itoa(int(want)) {
		t.Errorf("SHARDS = %q, want the completions %d", got, want)
	}
	cmd := strings.Join(append(c.Command, c.Args...), " ")
	for _, want := range []string{"afin bench", `--shard "$JOB_COMPLETION_INDEX/$SHARDS"`, "--results /results"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %q lacks %q", cmd, want)
		}
	}
	if !strings.HasPrefix(envValue(c, "AFIN_CACHE_DIR"), "/results/") {
		t.Errorf("AFIN_CACHE_DIR = %q, want it on the shared /results volume", envValue(c, "AFIN_CACHE_DIR"))
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/results" || len(pod.Volumes) != 1 ||
		pod.Volumes[0].Name != c.VolumeMounts[0].Name || pod.Volumes[0].PersistentVolumeClaim == nil {
		t.Errorf("want one PVC volume mounted at /results, got mounts %+v volumes %+v", c.VolumeMounts, pod.Volumes)
	}
}

// TestStrictDecodingCatchesMistakes makes sure the schema check above has
// teeth: each broken manifest must be refused.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	data, err := os.ReadFile("k8s-bench-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(data)
	cases := []struct{ name, from, to string }{
		{"misspelt field", "completionMode: Indexed", "completionMod: Indexed"},
		{"wrong type", "completions: 16", "completions: sixteen"},
		{"field at the wrong level", "  backoffLimitPerIndex: 2", "  template:\n    backoffLimitPerIndex: 2"},
		{"unknown container key", "workingDir: /afin", "workdir: /afin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.from) {
				t.Fatalf("manifest no longer contains %q; update the test", tc.from)
			}
			if _, err := decodeJob([]byte(strings.Replace(good, tc.from, tc.to, 1))); err == nil {
				t.Errorf("accepted a manifest with a %s", tc.name)
			}
		})
	}
}
