"""Built-in agents. Each module holds a worker side (an ``Agent``) and its coordinator side;
they double as examples for writing your own."""
