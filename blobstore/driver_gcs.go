//go:build gcs

package blobstore

import _ "gocloud.dev/blob/gcsblob" // gs:// URLs

func init() { optionalDrivers["gs"].built = true }
