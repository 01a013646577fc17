//go:build azure

package blobstore

import _ "gocloud.dev/blob/azureblob" // azblob:// URLs

func init() { optionalDrivers["azblob"].built = true }
