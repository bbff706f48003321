"""Fleet hardware: every node's document (`document`), kept current in memory (`index`),
asked with CEL (`query`) and compared within a model (`drift`)."""
