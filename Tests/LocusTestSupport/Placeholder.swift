// Test support
