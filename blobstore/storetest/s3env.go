package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
)

// S3Server is the S3-compatible server the tests run against, as
// scripts/s3server (and CI) name it in the environment: BS_TEST_S3_ENDPOINT,
// BS_TEST_S3_BUCKET and BS_TEST_S3_REGION (default us-east-1); credentials
// come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY as for any AWS
// client.
type S3Server struct {
	Endpoint, Bucket, Region string
}

// S3FromEnv returns the configured server. ok is false when none is
// configured; that is an error under BS_REQUIRE_S3=1, which CI sets so
// that the S3 tests cannot be skipped there, and so is a half-set
// configuration.
func S3FromEnv() (s S3Server, ok bool, err error) {
	s = S3Server{
		Endpoint: os.Getenv("BS_TEST_S3_ENDPOINT"),
		Bucket:   os.Getenv("BS_TEST_S3_BUCKET"),
		Region:   os.Getenv("BS_TEST_S3_REGION"),
	}
	if s.Region == "" {
		s.Region = "us-east-1"
	}
	switch {
	case s.Endpoint != "" && s.Bucket == "":
		return s, false, errors.New("BS_TEST_S3_ENDPOINT is set but BS_TEST_S3_BUCKET is not")
	case s.Endpoint != "":
		return s, true, nil
	case os.Getenv("BS_REQUIRE_S3") == "1":
		return s, false, errors.New(`BS_REQUIRE_S3=1 but BS_TEST_S3_ENDPOINT is not set: start the server with eval "$(scripts/s3server start)"`)
	}
	return s, false, nil
}

// URL is the store URL of a new prefix in the bucket, named after what
// uses it, unique to this process and call.
func (s S3Server) URL(what string) string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {s.Region}}
	return fmt.Sprintf("s3://%s/%s-%d-%016x?%s", s.Bucket, what, os.Getpid(), rand.Uint64(), q.Encode())
}

// BucketURL is the gocloud URL of the whole bucket, path-style (the
// server is an address, not a domain).
func (s S3Server) BucketURL() string {
	q := url.Values{"endpoint": {s.Endpoint}, "region": {s.Region}, "use_path_style": {"true"}}
	return "s3://" + s.Bucket + "?" + q.Encode()
}
