"""The click commands. Each parses options, calls one library function and prints."""
