package cloudtest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// AWS is what the EC2 stand-in says about its instance; an empty field is a category it does not have (404).
type AWS struct {
	// InstanceID is meta-data/instance-id (i-…).
	InstanceID string
	// AvailabilityZone is meta-data/placement/availability-zone (us-east-1a).
	AvailabilityZone string
}

// AWSToken is the session token the EC2 stand-in issues.
const AWSToken = "AQAEAFabricmapStandInToken=="

// IMDSv2's headers.
const (
	awsTTLHeader   = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
	awsTokenHeader = "X-Aws-Ec2-Metadata-Token"
)

// NewAWS starts a stand-in of EC2's IMDSv2 for inst: PUT /latest/api/token with a TTL of 1 to 21600 seconds
// (X-aws-ec2-metadata-token-ttl-seconds) gives AWSToken; a GET under /latest/meta-data/ must carry it
// (X-aws-ec2-metadata-token) or gets 401, as on an instance that requires IMDSv2.
func NewAWS(t testing.TB, inst AWS) *Server {
	t.Helper()
	return start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/latest/api/token" && r.Method == http.MethodPut:
			ttl, err := strconv.Atoi(r.Header.Get(awsTTLHeader))
			if err != nil || ttl < 1 || ttl > 21600 {
				http.Error(w, "missing or invalid "+awsTTLHeader, http.StatusBadRequest)
				return
			}
			w.Header().Set(awsTTLHeader, strconv.Itoa(ttl))
			answer(w, AWSToken)
		case r.URL.Path == "/latest/api/token":
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		case r.Method != http.MethodGet:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		case r.Header.Get(awsTokenHeader) != AWSToken:
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			category, _ := strings.CutPrefix(r.URL.Path, "/latest/meta-data/")
			answer(w, map[string]string{
				"instance-id":                 inst.InstanceID,
				"placement/availability-zone": inst.AvailabilityZone,
			}[category])
		}
	}))
}
