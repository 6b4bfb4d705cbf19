"""The store: the column schema of every CSV, their reading and writing, job folders and sweep gathering."""
