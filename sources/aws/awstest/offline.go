package awstest

import (
	"os"
	"path/filepath"
	"testing"
)

// Offline keeps the AWS SDK in a test off the machine's AWS settings and off any metadata endpoint: IMDS
// disabled, no shared files, and no region, profile, endpoint or credentials from the environment, except
// the static test credentials it sets (the stand-in wants signed calls; the SDK's default chain finds these
// first). Everything is restored after the test.
func Offline(t testing.TB) {
	t.Helper()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
}

// WithTestCredentials sets static credentials in the environment for the SDK's default chain (after Offline).
func WithTestCredentials(t testing.TB) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFABRICMAPTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fabricmap-test-secret")
}
