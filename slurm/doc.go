// Package slurm writes the tree in the forms Slurm's topology plugins read: topology.conf for the tree plugin
// (Tree) and for the block plugin (Block), and topology.yaml (YAML, Slurm 25.05 and later), with node and switch
// lists in Slurm's hostlist form (Hostlist; names of digits only written one by one). Hosts the tree knows
// only by their HCA's GUID are no Slurm nodes: every file leaves them out and names them in a comment line
// (Unidentified). It also reads a tree-plugin topology.conf back (ParseTree), so that
// tests and the CLI can check what was written. Everything here is pure.
//
// The grammar followed is Slurm's topology.conf(5) (sections topology/tree and topology/block) and
// topology.yaml(5) as published for Slurm 25.05, and, where those are silent, what slurmctld's topology/block
// plugin does when it reads the file (block_record.c): a block below the base block size stops slurmctld, block
// levels stop at 2^15 times the base, and higher-level blocks are built from blocks contiguous in the file. The
// tree form is also checked against a running slurmctld (Debian's 22.05) by test/slurm.
package slurm
