package tests

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// inferencePool mirrors the Gateway API Inference Extension's
// inference.networking.k8s.io/v1 InferencePool, field for field, so strict
// decoding catches misspelt or misplaced fields. (The upstream Go module is
// not among this project's dependencies.)
type inferencePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              inferencePoolSpec `json:"spec"`
}

type inferencePoolSpec struct {
	Selector          labelSelector     `json:"selector"`
	TargetPorts       []port            `json:"targetPorts"`
	EndpointPickerRef endpointPickerRef `json:"endpointPickerRef"`
}

// labelSelector is v1's LabelSelector: matchLabels only.
type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type port struct {
	Number int32 `json:"number"`
}

type endpointPickerRef struct {
	Group       *string `json:"group,omitempty"`
	Kind        string  `json:"kind,omitempty"`
	Name        string  `json:"name"`
	Port        *port   `json:"port,omitempty"`
	FailureMode string  `json:"failureMode,omitempty"`
}
