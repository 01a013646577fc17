// Package jsonerr words encoding/json's decoding errors for the people
// who wrote the JSON: by its field and the kind of value it wants, not by
// the Go type it was decoded into ("Go struct field RestoreArgs.entry_id
// of type string").
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Words is err, an error of decoding JSON, worded without Go's names:
// "entry_id: want a string, got number", "want an object, got array".
// Other errors are worded as they are, without the "json: " they begin
// with.
func Words(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		why := fmt.Sprintf("want %s, got %s", kind(te.Type), te.Value)
		if te.Field != "" {
			return te.Field + ": " + why
		}
		return why
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// kind names what a value of Go type t is in JSON.
func kind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another value"
}
