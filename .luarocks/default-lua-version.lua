return "5.4"
