// Package deploy holds checks of the deployment files at the repository root.
package deploy
